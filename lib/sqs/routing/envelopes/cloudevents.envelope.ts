import type { SqsEnvelopeReader, SqsInnerMessage, SqsOpenedEnvelope } from '../../sqs-envelope.interface';
import { base64Bytes } from '../../sqs-body.decoder';
import { notEnvelope, requireString, stringField } from './envelope-fields';

const WHAT = 'a CloudEvent';
const REQUIRED = ['specversion', 'id', 'source', 'type'];
/** The attributes CloudEvents defines (every other top-level one is an extension). */
const CONTEXT_ATTRIBUTES = new Set([
  ...REQUIRED,
  'subject',
  'time',
  'datacontenttype',
  'dataschema',
  'data',
  'data_base64',
]);

/** A structured-mode CloudEvent: the event is `data` (or `data_base64`'s bytes), `type` routes it, `id` keys it. */
export const cloudEventsEnvelope: SqsEnvelopeReader = {
  kind: 'cloudevents',

  recognizes: (body) => REQUIRED.every((name) => stringField(body, name) !== undefined),

  open(body): SqsOpenedEnvelope {
    const specversion = requireString(body, 'specversion', WHAT);
    const id = requireString(body, 'id', WHAT);
    const type = requireString(body, 'type', WHAT);
    const extensions = Object.fromEntries(
      Object.entries(body).filter(([name]) => !CONTEXT_ATTRIBUTES.has(name)),
    );
    return {
      envelope: {
        kind: 'cloudevents',
        id,
        source: requireString(body, 'source', WHAT),
        type,
        specversion,
        subject: stringField(body, 'subject'),
        time: stringField(body, 'time'),
        datacontenttype: stringField(body, 'datacontenttype'),
        dataschema: stringField(body, 'dataschema'),
        extensions,
      },
      inner: dataOf(body),
      type,
      key: id,
    };
  },
};

function dataOf(body: Record<string, unknown>): SqsInnerMessage {
  if (body.data_base64 === undefined) return { value: body.data === undefined ? {} : body.data };
  if ('data' in body) throw new Error(`the body is not ${WHAT}: it has both "data" and "data_base64"`);
  const encoded = body.data_base64;
  const bytes = typeof encoded === 'string' ? base64Bytes(encoded) : undefined;
  if (bytes === undefined) throw notEnvelope(WHAT, 'data_base64', encoded, 'base64');
  return { value: bytes };
}
