import { LoggerService } from '@nestjs/common';

export interface CapturedLine {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  message: string;
  context?: string;
  /** The stack passed with an error line (`logger.error(message, stack)`). */
  stack?: string;
}

/** A Nest logger that records every line instead of printing it, so tests can assert on logs. */
export class CapturingLogger implements LoggerService {
  readonly lines: CapturedLine[] = [];

  log(message: unknown, context?: string): void {
    this.push('log', message, context);
  }
  error(message: unknown, ...rest: unknown[]): void {
    // Nest calls error(message, context) or error(message, stack, context).
    this.push('error', message, rest[rest.length - 1] as string | undefined);
    if (rest.length >= 2) this.lines[this.lines.length - 1].stack = rest[0] as string;
  }
  warn(message: unknown, context?: string): void {
    this.push('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.push('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.push('verbose', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.push('fatal', message, context);
  }

  /** The messages of one level (and context) that match `pattern`. */
  matching(level: CapturedLine['level'], pattern: RegExp, context?: string): string[] {
    return this.lines
      .filter((line) => line.level === level && (context === undefined || line.context === context))
      .map((line) => line.message)
      .filter((message) => pattern.test(message));
  }

  /** Lines at `level` whose message contains `text`. */
  find(level: CapturedLine['level'], text: string): CapturedLine[] {
    return this.lines.filter((line) => line.level === level && line.message.includes(text));
  }

  private push(level: CapturedLine['level'], message: unknown, context: string | undefined): void {
    const text =
      message instanceof Error
        ? message.message
        : typeof message === 'object'
          ? JSON.stringify(message)
          : String(message);
    this.lines.push({ level, message: text, context });
  }
}
