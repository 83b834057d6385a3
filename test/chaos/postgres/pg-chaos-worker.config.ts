/**
 * What the controller tells one worker of the Postgres chaos run (CHAOS_PG_WORKER, as JSON), and the
 * messages between them. Shared by both sides, so they cannot disagree about a field.
 */
export interface PgChaosWorkerConfig {
  /** "w1#2": the second process started in slot 1. */
  name: string;
  /**
   * `transactional`: `@Idempotent({ transactional: true })`, the effect row written through the
   * handler's transaction. `plain`: `@Idempotent()` on the same store, the effect row written on a
   * connection of its own (committed at once), the completion written after the handler. `batch`: an
   * `@SqsBatchHandler()` with `@Idempotent({ transactional: true })`, the batch's rows written through
   * `batch.transaction` in one statement, committed with the batch's claims and completions.
   */
  mode: 'transactional' | 'plain' | 'batch';
  databaseUrl: string;
  queueUrl: string;
  sqsEndpoint: string;
  visibilityTimeout: number;
  /** The lease (plain), or how long a transaction may sit idle (transactional). */
  inProgressTtl: number;
}

/**
 * Where a worker told to die SIGKILLs itself, in the next handler call that reaches it:
 * - `mid-handler`: claim held, nothing written yet;
 * - `after-write`: the effect row written, the completion not committed: in transactional mode
 *   right before the COMMIT that carries both, in plain mode right after the effect's own commit
 *   and before `markComplete` (the window the README describes).
 */
export type PgKillPoint = 'mid-handler' | 'after-write';

export type PgChaosCommand = { type: 'die'; at: PgKillPoint } | { type: 'stop' };
export type PgChaosReport = { type: 'ready' };

/** The line a worker writes (synchronously) right before it SIGKILLs itself. */
export const PG_KILL_LINE = 'chaos-pg: SIGKILL';
