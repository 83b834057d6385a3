/** An attempt that fails on purpose, as a flaky downstream would; the redelivery retries it. */
export class TransientChaosError extends Error {
  override name = 'TransientChaosError';
}

/** Every attempt of a poison event fails: it must end in the dead-letter queue, never applied. */
export class PoisonChaosError extends Error {
  override name = 'PoisonChaosError';
}
