import { SqsContext } from './sqs-context';
import { parseBody, resolveBodyDecoder } from './sqs-body.decoder';

describe('body decoders', () => {
  const context = new SqsContext({ messageId: 'm-1', body: '' }, 'q');
  const decode = (decoder: unknown, text: unknown) =>
    resolveBodyDecoder(decoder, 'test').decode(text, context);

  it('json: a JSON object, as it is', () => {
    expect(decode('json', '{"a":1}')).toEqual({ a: 1 });
    expect(() => decode('json', 'Test message.')).toThrow('the body is not JSON');
  });

  it('text: the text as { body }', () => {
    expect(decode('text', 'Hello from SQS!')).toEqual({ body: 'Hello from SQS!' });
    expect(decode('text', '{"a":1}')).toEqual({ body: '{"a":1}' });
    expect(() => decode('text', undefined)).toThrow('the record has no body');
  });

  it('base64: the bytes as { body: Buffer }; base64-text: the UTF-8 text', () => {
    const bytes = Buffer.from([0, 1, 254, 255]);
    expect(decode('base64', bytes.toString('base64'))).toEqual({ body: bytes });
    expect(decode('base64-text', Buffer.from('héllo').toString('base64'))).toEqual({ body: 'héllo' });
    expect(() => decode('base64', 'not base64!')).toThrow('the body is not base64');
    expect(() => decode('base64', 'abc')).toThrow('the body is not base64');
  });

  it('a function: objects as they are, anything else as { body }, promises awaited', async () => {
    expect(decode((text: string) => ({ parts: text.split(',') }), 'a,b')).toEqual({ parts: ['a', 'b'] });
    expect(decode((text: string) => text.length, 'abc')).toEqual({ body: 3 });
    expect(decode((text: string) => text.split(','), 'a,b')).toEqual({ body: ['a', 'b'] });
    await expect(decode(async (text: string) => ({ text }), 'x')).resolves.toEqual({ text: 'x' });
    expect(() =>
      decode(() => {
        throw new Error('bad CSV');
      }, 'x'),
    ).toThrow('bad CSV');
  });

  it("refuses a function's object with a key that could replace the event's prototype", () => {
    expect(() => decode((text: string) => JSON.parse(text), '{"__proto__":{"x":1}}')).toThrow(
      'the key "__proto__"',
    );
  });

  it('says a record has no body, and what it had instead', () => {
    for (const decoder of ['json', 'text', 'base64', 'base64-text', (text: string) => text]) {
      expect(() => decode(decoder, null)).toThrow(new Error('the record has no body (got null)'));
      expect(() => decode(decoder, undefined)).toThrow(new Error('the record has no body (got undefined)'));
      expect(() => decode(decoder, 42)).toThrow(new Error('the record has no body (got number)'));
    }
  });

  it('base64: reads a text broken into lines or spaced, as MIME and many tools write it', () => {
    const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => (i * 37) % 256));
    const wrapped = bytes.toString('base64').replace(/.{1,76}/g, '$&\r\n');
    expect(decode('base64', wrapped)).toEqual({ body: bytes });
    expect(decode('base64-text', ' aGVs\tbG8g\n d29y bGQ= \n')).toEqual({ body: 'hello world' });
  });

  it('a function: null or nothing as { body }, and an awaited answer checked as one returned', async () => {
    expect(decode(() => null, 'x')).toEqual({ body: null });
    expect(decode(() => undefined, 'x')).toEqual({ body: undefined });
    await expect(decode(async (text: string) => text.toUpperCase(), 'x')).resolves.toEqual({ body: 'X' });
    await expect(decode(async () => null, 'x')).resolves.toEqual({ body: null });
    await expect(decode(async (text: string) => JSON.parse(text), '{"a":{"constructor":1}}')).rejects.toThrow(
      new Error(
        'the body has the key "a.constructor", which could replace the event\'s prototype; rename the field',
      ),
    );
  });

  it('a function: a thenable answer (another promise library) is awaited, as a promise', async () => {
    const thenable = (value: unknown) => ({
      then: (resolve: (value: unknown) => void) => resolve(value),
    });
    const answer = decode(() => thenable({ orderId: 'o-1' }), 'x');
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).resolves.toEqual({ orderId: 'o-1' });
    await expect(decode(() => thenable('plain'), 'x')).resolves.toEqual({ body: 'plain' });
  });

  it('refuses an unknown decoder with a sentence', () => {
    expect(() => resolveBodyDecoder('xml', 'SQS queue "q"')).toThrow(
      `SQS queue "q": decoder must be 'json', 'text', 'base64', 'base64-text' or a function`,
    );
    expect(() => resolveBodyDecoder('toString', 'SQS queue "q"')).toThrow('decoder must be');
  });

  it('names what it got in place of a decoder, word for word', () => {
    const refusal = (decoder: unknown) => {
      try {
        resolveBodyDecoder(decoder, 'SQS queue "q"');
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    };
    const must = `SQS queue "q": decoder must be 'json', 'text', 'base64', 'base64-text' or a function (text, ctx) => payload`;
    expect(refusal('xml')).toBe(`${must}, got string "xml".`);
    expect(refusal('JSON')).toBe(`${must}, got string "JSON".`);
    expect(refusal(null)).toBe(`${must}, got null.`);
    expect(refusal(7)).toBe(`${must}, got number 7.`);
    expect(refusal({ decode: () => ({}) })).toBe(`${must}, got an object.`);
    expect(refusal(['json'])).toBe(`${must}, got an array.`);
  });
});

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

  it('refuses a prototype key spelled with \\u escapes, as JSON allows', () => {
    expect(() => parseBody(String.raw`{"\u005f_proto__":{"isAdmin":true}}`)).toThrow(
      new Error(
        'the body has the key "__proto__", which could replace the event\'s prototype; rename the field',
      ),
    );
    expect(() => parseBody(String.raw`{"a":[{"constr\u0075ctor":1}]}`)).toThrow('the key "a.0.constructor"');
    expect(parseBody(String.raw`{"name":"caf\u00e9","\u0069d":"o-1"}`)).toEqual({ name: 'café', id: 'o-1' });
  });
});
