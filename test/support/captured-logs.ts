import { Logger } from '@nestjs/common';

/**
 * Silences Nest's logger for a test and returns the lines it was given (log, warn, error), for
 * specs that assert what an operator would read. Undone by `jest.restoreAllMocks()`.
 */
export function captureLogs(): string[] {
  const lines: string[] = [];
  for (const level of ['log', 'warn', 'error'] as const) {
    jest
      .spyOn(Logger.prototype, level)
      .mockImplementation((...args: unknown[]) => void lines.push(String(args[0])));
  }
  return lines;
}
