import { ConsoleLogger, Logger } from '@nestjs/common';
import { SqsRecordSink } from './sqs-record.sink';
import { RecordObservers } from '../../idempotency/record-observer';

describe('SqsRecordSink', () => {
  const result = { messageId: 'm-1', status: 'FAILED' as const, error: new Error('boom'), durationMs: 1.25 };

  afterEach(() => {
    jest.restoreAllMocks();
    (Logger as unknown as { logLevels?: unknown }).logLevels = undefined;
    Logger.overrideLogger(new ConsoleLogger());
  });

  it('logs one line per record when the app sets no log levels (Nest prints every level then)', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    new SqsRecordSink().record('orders', result, 2);
    expect(error).toHaveBeenCalledWith(
      'status=FAILED type=- key=- messageId=m-1 queue=orders receiveCount=2 durationMs=1.3 reason="boom"',
      result.error.stack, // what the handler threw: its stack is part of the one line
    );
  });

  it('stays quiet for a level the app turned off', () => {
    Logger.overrideLogger(['fatal']);
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    new SqsRecordSink().record('orders', result, 2);
    expect(error).not.toHaveBeenCalled();
  });

  it('builds no line when Nest logging is off (logger: false), and still journals the record', () => {
    Logger.overrideLogger(false);
    const observer = { recordEnded: jest.fn() };
    const error = jest.spyOn(Logger.prototype, 'error');
    const toFixed = jest.spyOn(Number.prototype, 'toFixed');
    const observers = new RecordObservers();
    observers.add(observer as never);
    new SqsRecordSink({}, observers).record('orders', result, 2);
    expect(observer.recordEnded).toHaveBeenCalledWith('orders', result, 2, false);
    expect(error).not.toHaveBeenCalled();
    expect(toFixed).not.toHaveBeenCalled();
  });
});
