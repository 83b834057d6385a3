/** Polls `condition` until it holds; fails after `timeoutMs` instead of sleeping a guessed time. */
export async function waitFor(
  condition: () => boolean,
  timeoutMs = 5_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
