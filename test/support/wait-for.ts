/**
 * Polls `condition` (sync or async) until it holds; fails after `timeoutMs` saying what it waited
 * for, instead of sleeping a guessed time.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
