import { Logger, LogLevel } from '@nestjs/common';
import type { SqsRecordResult, SqsRecordStatus } from './sqs-record-result';

/**
 * One log line per record, at its end: status, event type, key, message id, queue, receive count,
 * duration. The level follows what an operator must act on: handled, skipped and duplicate
 * records are routine (`log`/`debug`); an in-flight duplicate is expected under redelivery (`warn`);
 * failures and invalid messages need attention (`error`).
 */
const LEVELS: Record<SqsRecordStatus, LogLevel> = {
  OK: 'log',
  SKIPPED: 'log',
  DUPLICATE: 'log',
  IN_PROGRESS: 'warn',
  FAILED: 'error',
  INVALID: 'error',
};

export class SqsRecordLogger {
  private readonly logger = new Logger('SqsRecord');

  record(queue: string, result: SqsRecordResult, receiveCount: number): void {
    const level = LEVELS[result.status];
    if (!isLevelEnabled(level)) return;
    let line =
      `status=${result.status} type=${result.eventType ?? '-'} key=${result.key ?? '-'} ` +
      `messageId=${result.messageId || '-'} queue=${queue} receiveCount=${receiveCount} ` +
      `durationMs=${result.durationMs.toFixed(1)}`;
    if (result.error) line += ` reason="${result.error.message}"`;
    switch (level) {
      case 'error':
        this.logger.error(line);
        break;
      case 'warn':
        this.logger.warn(line);
        break;
      default:
        this.logger.log(line);
    }
  }
}

/**
 * Whether Nest would print `level`. `Logger.isLevelEnabled()` answers `false` for every level until
 * the app sets log levels (`logger: [...]`), although Nest then prints them all; only a configured
 * list may turn a level off.
 */
function isLevelEnabled(level: LogLevel): boolean {
  const configured = (Logger as unknown as { logLevels?: LogLevel[] }).logLevels;
  return configured === undefined || Logger.isLevelEnabled(level);
}
