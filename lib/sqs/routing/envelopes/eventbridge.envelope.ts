import type { SqsEnvelopeReader, SqsOpenedEnvelope } from '../../sqs-envelope.interface';
import { isObject } from '../../sqs-body.decoder';
import { notEnvelope, requireString, stringField } from './envelope-fields';

const WHAT = 'an EventBridge event';
const ALWAYS_PRESENT = ['version', 'id', 'detail-type', 'source', 'account', 'time', 'region'];

/** An EventBridge event: the event is `detail`, `detail-type` routes it, `id` keys it. */
export const eventBridgeEnvelope: SqsEnvelopeReader = {
  kind: 'eventbridge',

  recognizes: (body) =>
    ALWAYS_PRESENT.every((name) => stringField(body, name) !== undefined) &&
    Array.isArray(body.resources) &&
    isObject(body.detail),

  open(body): SqsOpenedEnvelope {
    const id = requireString(body, 'id', WHAT);
    const detailType = requireString(body, 'detail-type', WHAT);
    if (!isObject(body.detail)) throw notEnvelope(WHAT, 'detail', body.detail, 'an object');
    return {
      envelope: {
        kind: 'eventbridge',
        id,
        detailType,
        source: requireString(body, 'source', WHAT),
        account: stringField(body, 'account'),
        time: stringField(body, 'time'),
        region: stringField(body, 'region'),
        resources: Array.isArray(body.resources)
          ? body.resources.filter((resource): resource is string => typeof resource === 'string')
          : [],
        version: stringField(body, 'version'),
      },
      inner: { value: body.detail },
      type: detailType,
      key: id,
    };
  },
};
