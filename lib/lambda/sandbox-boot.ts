/**
 * The one boot of a Lambda sandbox, shared by its invocations. It starts when the handler is created
 * (Lambda's INIT phase runs the module code that creates it), or on first use. A boot that fails is
 * kept for the first caller to meet it, whose error then names the cause, as a boot run by the first
 * invocation did; the next caller boots again. It never rejects unobserved: an INIT boot that fails
 * before any invocation would otherwise be an unhandled rejection, which ends the process under Node's
 * default (`--unhandled-rejections=throw`), so a sandbox would die at INIT instead of reporting why.
 */
export class SandboxBoot<T> {
  private attempt: Promise<T> | undefined;
  /** What the current attempt booted, once it has: the invocations' path, with no promise to await. */
  ready: T | undefined;

  constructor(private readonly boot: () => Promise<T>) {}

  /** Starts a boot now (at INIT), unless one is in flight or done. */
  start(): void {
    this.attempt ??= this.begin();
  }

  /** What the boot gives: the attempt in flight or done, or a new one; a failure is reported here and forgotten. */
  async get(): Promise<T> {
    const attempt = (this.attempt ??= this.begin());
    try {
      const value = await attempt;
      if (this.attempt === attempt) this.ready = value;
      return value;
    } catch (error) {
      if (this.attempt === attempt) this.attempt = undefined;
      throw error;
    }
  }

  /**
   * Forgets the boot (the next caller boots again) and gives what it booted, once an attempt in flight
   * has ended; `undefined` when none ran or it failed (a failure is its caller's to report, not the closer's).
   */
  async forget(): Promise<T | undefined> {
    const attempt = this.attempt;
    this.attempt = this.ready = undefined;
    return attempt?.catch(() => undefined);
  }

  private begin(): Promise<T> {
    const attempt = this.boot();
    attempt.catch(() => undefined); // observed here; its callers still see the failure
    return attempt;
  }
}
