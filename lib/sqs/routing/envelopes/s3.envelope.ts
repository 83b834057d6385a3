import type { SqsEnvelopeReader, SqsOpenedEnvelope } from '../../sqs-envelope.interface';
import { isObject } from '../../sqs-body.decoder';
import { notEnvelope, stringField } from './envelope-fields';

const WHAT = 'an S3 event notification';

/**
 * An S3 notification of one record (more are refused): keyed `<bucket>/<key>@<sequencer>`, since S3
 * may deliver one event twice; its `s3:TestEvent` is acked as skipped.
 */
export const s3Envelope: SqsEnvelopeReader = {
  kind: 's3',

  recognizes: (body) =>
    isTestEvent(body) ||
    (Array.isArray(body.Records) &&
      body.Records.length > 0 &&
      body.Records.every(
        (record) => isObject(record) && record.eventSource === 'aws:s3' && isObject(record.s3),
      )),

  open(body): SqsOpenedEnvelope {
    if (isTestEvent(body)) {
      const bucket = stringField(body, 'Bucket') ?? '';
      return {
        envelope: {
          kind: 's3',
          eventName: 's3:TestEvent',
          bucket,
          objectKey: '',
          eventTime: stringField(body, 'Time'),
          region: undefined,
          sequencer: undefined,
        },
        inner: { value: body },
        type: 's3:TestEvent',
        skip: `s3:TestEvent of bucket "${bucket}" (S3 sends one when a notification is configured)`,
      };
    }
    const records = body.Records;
    if (!Array.isArray(records) || records.length === 0) {
      throw notEnvelope(WHAT, 'Records', records, 'a list of records');
    }
    if (records.length > 1) {
      throw new Error(
        `the S3 notification holds ${records.length} records; S3 sends one per message, and this one is ` +
          'refused whole rather than handled in part',
      );
    }
    const record = records[0];
    const s3 = isObject(record) ? record.s3 : undefined;
    if (!isObject(record) || record.eventSource !== 'aws:s3' || !isObject(s3)) {
      throw new Error(`the body is not ${WHAT}: its record has no "eventSource": "aws:s3" and "s3" object`);
    }
    const bucket = isObject(s3.bucket) ? stringField(s3.bucket, 'name') : undefined;
    const object = isObject(s3.object) ? s3.object : undefined;
    const key = object ? stringField(object, 'key') : undefined;
    if (bucket === undefined || key === undefined) {
      throw new Error(`the body is not ${WHAT}: its record names no bucket and object key`);
    }
    const sequencer = object ? stringField(object, 'sequencer') : undefined;
    return {
      envelope: {
        kind: 's3',
        eventName: stringField(record, 'eventName') ?? '',
        bucket,
        objectKey: decodeObjectKey(key),
        eventTime: stringField(record, 'eventTime'),
        region: stringField(record, 'awsRegion'),
        sequencer,
      },
      inner: { value: record },
      key: sequencer === undefined ? undefined : `${bucket}/${key}@${sequencer}`,
    };
  },
};

function isTestEvent(body: Record<string, unknown>): boolean {
  return body.Event === 's3:TestEvent' && body.Service === 'Amazon S3';
}

/** S3 writes keys URL-encoded, with `+` for spaces. */
function decodeObjectKey(key: string): string {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return key;
  }
}
