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

  it('refuses an unknown decoder with a sentence', () => {
    expect(() => resolveBodyDecoder('xml', 'SQS queue "q"')).toThrow(
      `SQS queue "q": decoder must be 'json', 'text', 'base64', 'base64-text' or a function`,
    );
    expect(() => resolveBodyDecoder('toString', 'SQS queue "q"')).toThrow('decoder must be');
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
});
