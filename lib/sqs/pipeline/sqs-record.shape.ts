import { InvalidSqsMessageError } from '../sqs-message.errors';
import type { SqsRecordLike } from '../sqs-record.interface';

/** Refuses what cannot be an SQS message before anything reads it. */
export function checkRecordShape(record: SqsRecordLike, messageId: string, queue: string): void {
  if (record === null || typeof record !== 'object') {
    throw new InvalidSqsMessageError(
      '',
      queue,
      `the record is ${record === null ? 'null' : typeof record}, not an object`,
    );
  }
  if (messageId === '') throw new InvalidSqsMessageError('', queue, 'the record has no messageId');
  if (record.eventSource !== undefined && record.eventSource !== 'aws:sqs') {
    throw new InvalidSqsMessageError(
      messageId,
      queue,
      `it is not an SQS record (eventSource ${JSON.stringify(record.eventSource)}); only SQS event sources can feed this handler`,
    );
  }
}
