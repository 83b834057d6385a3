import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps every line, so tests can assert what an operator would read. */
export class CaptureLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string; context?: string }> = [];

  log(message: unknown, context?: string): void {
    this.push('log', message, context);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.push('error', message, rest.at(-1) as string | undefined);
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

  /** The messages of one level (and context) that match `pattern`. */
  matching(level: string, pattern: RegExp, context?: string): string[] {
    return this.lines
      .filter((line) => line.level === level && (context === undefined || line.context === context))
      .map((line) => line.message)
      .filter((message) => pattern.test(message));
  }

  private push(level: string, message: unknown, context?: string): void {
    this.lines.push({ level, message: String(message), context });
  }
}
