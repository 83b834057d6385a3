import { IsInt } from 'class-validator';
import { parseBody, toEvent } from './sqs-message.decoder';

describe('parseBody', () => {
  it('parses JSON objects, with or without a byte order mark', () => {
    expect(parseBody('{"a":1}')).toEqual({ a: 1 });
    expect(parseBody('\ufeff{"a":1}')).toEqual({ a: 1 });
  });

  it('survives a body nested 10,000 levels deep', () => {
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    expect(() => parseBody(deep)).not.toThrow();
  });

  it.each([
    [undefined, 'the record has no body'],
    ['', 'the body is empty'],
    ['{', 'the body is not JSON'],
    ['[]', 'JSON array, not an object'],
    ['"s"', 'JSON string, not an object'],
    ['null', 'JSON null, not an object'],
    ['{"a":{"__proto__":{"x":1}}}', 'the key "a.__proto__"'],
    ['{"constructor":{"prototype":{}}}', 'the key "constructor"'],
  ])('refuses %p', (body, reason) => {
    expect(() => parseBody(body)).toThrow(reason);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('lets "__proto__" appear as a value', () => {
    expect(parseBody('{"note":"\\"__proto__\\" is a word"}')).toEqual({ note: '"__proto__" is a word' });
  });
});

describe('toEvent', () => {
  class Counted {
    @IsInt() count!: number;
  }
  class Plain {
    name?: string;
  }

  it('maps onto the class and validates it', async () => {
    const event = await toEvent(Counted, { count: 3 }, {});
    expect(event).toBeInstanceOf(Counted);
    await expect(toEvent(Counted, { count: 'three' }, {})).rejects.toThrow(
      'Counted fails validation: count must be an integer',
    );
  });

  it('accepts classes without validation decorators', async () => {
    await expect(toEvent(Plain, { name: 'x' }, {})).resolves.toBeInstanceOf(Plain);
  });

  it('can skip validation', async () => {
    await expect(toEvent(Counted, { count: 'three' }, { validate: false })).resolves.toBeInstanceOf(Counted);
  });

  it('passes validator options (whitelist, forbidNonWhitelisted)', async () => {
    await expect(
      toEvent(
        Counted,
        { count: 1, extra: true },
        { validatorOptions: { whitelist: true, forbidNonWhitelisted: true } },
      ),
    ).rejects.toThrow('property extra should not exist');
  });
});
