import 'reflect-metadata';
import * as classTransformer from 'class-transformer';
import { Exclude, Expose, plainToInstance, Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString } from 'class-validator';
import {
  checkedDecoratorMaps,
  classesOfProperty,
  loadPlainEventMapper,
  mapToEvent,
} from './plain-event.mapper';

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
  { writable: 21 },
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
    ['a Date in an array', { id: 'a', list: [1, new Date(0)] }],
    ['a Buffer in a nested object', { id: 'a', nested: { ok: 1, body: Buffer.from('hi') } }],
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

  it('keeps "__proto__" and "constructor" keys of a parsed body off the event, as class-transformer does', () => {
    const body =
      '{"id":"a","__proto__":{"polluted":true},"constructor":"x","nested":{"__proto__":{"p":1},"ok":2}}';
    const expected = plainToInstance(Plain, JSON.parse(body));
    const event = mapToEvent(Plain, JSON.parse(body), undefined) as Plain & { nested: object };
    expect(event).toBeInstanceOf(Plain);
    expect(event.constructor).toBe(Plain);
    expect((event as unknown as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(event.nested)).toBe(Object.prototype);
    expect(shapeOf(event)).toEqual(shapeOf(expected));
  });

  it('maps onto an instance whose prototype names no constructor (a function with a bare prototype)', () => {
    function Legacy(this: { made: boolean }) {
      this.made = true;
    }
    Legacy.prototype = Object.create(null);
    const eventClass = Legacy as unknown as new () => object;
    expect(shapeOf(mapToEvent(eventClass, { id: 'a' }, undefined))).toEqual({
      class: undefined,
      entries: [
        ['made', true],
        ['id', 'a'],
      ],
    });
  });
});

describe('the direct mapping before it is loaded', () => {
  it('takes class-transformer until loaded, starts loading on the first event, and maps directly after', async () => {
    await jest.isolateModulesAsync(async () => {
      const fresh = (await import('./plain-event.mapper')) as typeof import('./plain-event.mapper');
      const transformer = (await import('class-transformer')) as typeof classTransformer;
      const spy = jest.spyOn(transformer, 'plainToInstance');
      try {
        expect(fresh.mapToEvent(Plain, { id: 'a' }, undefined)).toBeInstanceOf(Plain);
        expect(spy).toHaveBeenCalledTimes(1);
        // Loaded by that first event, not by a call of the test's: later events map directly.
        let direct = false;
        for (let turn = 0; turn < 1_000 && !direct; turn++) {
          await new Promise((resolve) => setImmediate(resolve));
          spy.mockClear();
          expect(fresh.mapToEvent(Plain, { id: 'b' }, undefined)).toBeInstanceOf(Plain);
          direct = spy.mock.calls.length === 0;
        }
        expect(direct).toBe(true);
        expect(await fresh.loadPlainEventMapper()).toBe(true);
      } finally {
        spy.mockRestore();
      }
    });
  });

  it('says it is unusable where class-transformer’s storage cannot be read, and every event takes class-transformer', async () => {
    await jest.isolateModulesAsync(async () => {
      // A storage where @Type() writes nothing (as with another copy of class-transformer): the check fails.
      jest.doMock('class-transformer/cjs/storage.js', () => {
        const actual = jest.requireActual('class-transformer/cjs/storage.js');
        return {
          defaultMetadataStorage: Object.create(actual.defaultMetadataStorage, {
            addTypeMetadata: { value: () => undefined },
          }),
        };
      });
      try {
        const fresh = (await import('./plain-event.mapper')) as typeof import('./plain-event.mapper');
        const transformer = (await import('class-transformer')) as typeof classTransformer;
        expect(await fresh.loadPlainEventMapper()).toBe(false);
        const spy = jest.spyOn(transformer, 'plainToInstance');
        try {
          expect(fresh.mapToEvent(Plain, { id: 'a' }, undefined)).toBeInstanceOf(Plain);
          expect(spy).toHaveBeenCalledTimes(1);
        } finally {
          spy.mockRestore();
        }
      } finally {
        jest.dontMock('class-transformer/cjs/storage.js');
      }
    });
  });
});

describe('the classes class-transformer builds a property as (classesOfProperty)', () => {
  class Card {
    kind = 'card';
  }
  class Transfer {
    kind = 'transfer';
  }
  class Payment {
    @Type(() => Object, {
      discriminator: {
        property: 'kind',
        subTypes: [
          { name: 'card', value: Card },
          { name: 'transfer', value: Transfer },
        ],
      },
    })
    method!: Card | Transfer;
    @Type(() => Address, { discriminator: { property: 'kind', subTypes: [] } }) home!: Address;
    @Type((options) => ((options?.object as { flag?: boolean }).flag ? Card : Transfer)) chosen!: object;
    untyped?: string;
  }
  class Refund extends Payment {}
  /** Overrides an ancestor's @Type() with one read from the value: the override wins, and says nothing here. */
  class Chargeback extends Payment {
    @Type((options) => ((options?.object as { flag?: boolean }).flag ? Card : Transfer))
    declare home: Address;
  }

  beforeAll(async () => {
    expect(await loadPlainEventMapper()).toBe(true);
  });

  it('reads @Type()’s class, on the class or an ancestor', () => {
    expect(classesOfProperty(Typed, 'address')).toEqual([Address]);
    expect(classesOfProperty(TypedChild, 'address')).toEqual([Address]);
  });

  it('reads every subtype of a discriminator, and the type function where it lists none', () => {
    expect(classesOfProperty(Refund, 'method')).toEqual([Card, Transfer]);
    expect(classesOfProperty(Payment, 'home')).toEqual([Address]);
  });

  it('knows nothing of a property without @Type(), or one built from the value itself', () => {
    expect(classesOfProperty(Payment, 'untyped')).toBeUndefined();
    expect(classesOfProperty(Plain, 'id')).toBeUndefined();
    expect(classesOfProperty(Payment, 'chosen')).toBeUndefined();
    expect(classesOfProperty(Chargeback, 'home')).toBeUndefined();
  });
});
