import 'reflect-metadata';
import * as classTransformer from 'class-transformer';
import { Exclude, Expose, plainToInstance, Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { checkedDecoratorMaps, loadPlainEventMapper, mapToEvent } from './plain-event.mapper';

class Plain {
  kind = 'default';
  @IsString() id!: string;
  @IsOptional() @IsInt() amount?: number;
}

class WithAccessors {
  private hidden = 0;
  get readOnly(): string {
    return 'computed';
  }
  get writable(): number {
    return this.hidden;
  }
  set writable(value: number) {
    this.hidden = value * 2;
  }
  describe(): string {
    return 'a method';
  }
}

class Child extends Plain {
  extra?: string;
}

class Address {
  street!: string;
}

class Typed {
  @Type(() => Address) address!: Address;
}

class Renamed {
  @Expose({ name: 'order_id' }) orderId!: string;
}

class Hidden {
  @Exclude() secret?: string;
  visible?: string;
}

class Transformed {
  @Transform(({ value }) => String(value).toUpperCase()) code!: string;
}

class TypedChild extends Typed {}

const JSON_PAYLOADS: Record<string, unknown>[] = [
  {},
  { id: 'a-1', amount: 3, type: 'order_created' },
  { id: 'a-1', kind: 'given', nested: { list: [1, 'two', null, { deep: true }], empty: {} } },
  {
    id: 'x',
    toString: 'shadow',
    valueOf: 1,
    hasOwnProperty: 'h',
    nested: { toString: 'x', isPrototypeOf: 2, ok: 3 },
  },
  { readOnly: 'from the payload', writable: 21, describe: 'not a method', hidden: 5 },
  {
    matrix: [
      [1, 2],
      [3, [4, { five: 5 }]],
    ],
    flag: false,
    zero: 0,
    text: '',
  },
  { '0': 'numeric key', b: 1, a: 2 },
];

/** What a caller sees of an instance: its class and its own properties, recursively. */
const shapeOf = (value: unknown): unknown =>
  value === null || typeof value !== 'object'
    ? value
    : {
        class: (value as object).constructor?.name,
        entries: Object.entries(value).map(([key, inner]) => [key, shapeOf(inner)]),
      };

describe('the direct event mapping (mapToEvent)', () => {
  beforeAll(async () => {
    expect(await loadPlainEventMapper()).toBe(true);
  });

  describe.each<new () => object>([Plain, WithAccessors, Child])(
    'a class without class-transformer decorators: %p',
    (eventClass) => {
      it.each(JSON_PAYLOADS.map((payload) => [JSON.stringify(payload), payload]))(
        'maps %s as plainToInstance does',
        (_name, payload) => {
          // Parsed here, as the JSON decoder parses bodies (a payload of another realm, such as
          // Node's structuredClone under Jest, would take class-transformer).
          const expected = plainToInstance(eventClass, JSON.parse(JSON.stringify(payload)));
          const spy = jest.spyOn(classTransformer, 'plainToInstance');
          let actual: unknown;
          try {
            actual = mapToEvent(eventClass, JSON.parse(JSON.stringify(payload)), undefined);
            expect(spy).not.toHaveBeenCalled();
          } finally {
            spy.mockRestore();
          }
          expect(shapeOf(actual)).toEqual(shapeOf(expected));
          expect(actual).toBeInstanceOf(eventClass);
        },
      );
    },
  );

  it('maps a class without decorators without class-transformer, and a decorated one with it', () => {
    const spy = jest.spyOn(classTransformer, 'plainToInstance');
    try {
      mapToEvent(Plain, { id: 'a' }, undefined);
      expect(spy).not.toHaveBeenCalled();
      mapToEvent(Typed, { address: {} }, undefined);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('copies nested objects and arrays rather than sharing them with the payload', () => {
    const payload = { id: 'a', nested: { list: [{ n: 1 }] } };
    const event = mapToEvent(Plain, payload, undefined) as unknown as typeof payload;
    expect(event.nested).toEqual(payload.nested);
    expect(event.nested).not.toBe(payload.nested);
    expect(event.nested.list).not.toBe(payload.nested.list);
    expect(event.nested.list[0]).not.toBe(payload.nested.list[0]);
  });

  it.each([
    [
      '@Type',
      Typed,
      { address: { street: 'Main' } },
      (event: any) => expect(event.address).toBeInstanceOf(Address),
    ],
    ['@Expose({ name })', Renamed, { order_id: 'o-1' }, (event: any) => expect(event.orderId).toBe('o-1')],
    ['@Exclude', Hidden, { secret: 's', visible: 'v' }, (event: any) => expect(event.secret).toBeUndefined()],
    ['@Transform', Transformed, { code: 'abc' }, (event: any) => expect(event.code).toBe('ABC')],
    [
      'a decorated ancestor',
      TypedChild,
      { address: { street: 'Main' } },
      (event: any) => expect(event.address).toBeInstanceOf(Address),
    ],
  ])('leaves a class with %s to class-transformer', (_name, eventClass, payload, check) => {
    check(mapToEvent(eventClass as new () => object, payload, undefined));
  });

  it('leaves any transformOptions to class-transformer', () => {
    const event = mapToEvent(Plain, { id: 'a', amount: '7' }, { enableImplicitConversion: true }) as Plain;
    expect(event.amount).toBe(7);
  });

  it.each([
    ['a Buffer', { id: 'a', body: Buffer.from('hi') }],
    ['a Date', { id: 'a', at: new Date(0) }],
    ['a class instance', { id: 'a', address: Object.assign(new Address(), { street: 'x' }) }],
    ['a sparse array', { id: 'a', list: Object.assign(new Array(3), { 0: 1, 2: 3 }) }],
    ['undefined', { id: 'a', gone: undefined }],
  ])(
    'leaves a payload holding %s (a decoder function may return one) to class-transformer',
    (_name, payload) => {
      const constructed = jest.fn();
      class Counted {
        constructor() {
          constructed();
        }
      }
      const expected = plainToInstance(Counted, payload);
      constructed.mockClear();
      const actual = mapToEvent(Counted, payload as Record<string, unknown>, undefined);
      expect(shapeOf(actual)).toEqual(shapeOf(expected));
      expect(constructed).toHaveBeenCalledTimes(1);
    },
  );

  it('refuses a storage where the decorators do not write (another copy of class-transformer)', () => {
    const elsewhere = {
      _typeMetadatas: new Map(),
      _transformMetadatas: new Map(),
      _exposeMetadatas: new Map(),
      _excludeMetadatas: new Map(),
    };
    expect(checkedDecoratorMaps(elsewhere)).toBeNull();
    expect(checkedDecoratorMaps(undefined)).toBeNull();
    expect(checkedDecoratorMaps({})).toBeNull();
  });
});
