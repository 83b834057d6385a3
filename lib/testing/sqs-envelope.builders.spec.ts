import { buildCloudEvent } from './sqs-envelope.builders';

describe('buildCloudEvent', () => {
  it('writes extensions beside the attributes it sets', () => {
    expect(
      buildCloudEvent({ a: 1 }, { type: 't', id: 'e-1', extensions: { tenant: 'acme', dataschema: '/s' } }),
    ).toMatchObject({ id: 'e-1', type: 't', tenant: 'acme', dataschema: '/s', data: { a: 1 } });
  });

  it('refuses an extension that would replace an attribute it writes, naming the option to use', () => {
    expect(() => buildCloudEvent({}, { type: 't', extensions: { id: 'x' } })).toThrow(
      'buildCloudEvent: the extension "id" is a CloudEvents attribute the builder writes; set it with the option id.',
    );
    expect(() => buildCloudEvent({}, { type: 't', extensions: { specversion: '0.3' } })).toThrow(
      'the extension "specversion" is a CloudEvents attribute the builder writes; it cannot be an extension.',
    );
  });
});
