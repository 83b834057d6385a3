import { isSkipMessageException } from '../../common/skip-message.exception';
import {
  AcquireResult,
  TransactionalBatchRun,
  TransactionalClaim,
  TransactionalRunAnswer,
} from '../idempotency-store.interface';
import type { PgQueryable, PgQueryConfig } from './postgres-client.interface';
import { answerOf, ClaimRow, TtlParameter } from './postgres-idempotency.statements';
import type { PostgresTransactions } from './postgres-transactions';

/**
 * A transactional handler's record on Postgres: claim, writes and completion commit together.
 *
 *   BEGIN
 *   claim (advisory lock gate, row written completed, idle timeout set) ─┬─ COMPLETED ───▶ ROLLBACK: a duplicate
 *                                                                        ├─ IN_PROGRESS ─▶ ROLLBACK: retried later
 *                                                                        └─ ACQUIRED ────▶ SAVEPOINT
 *   handler(tx) ─┬─ resolves ─────────────▶ RELEASE SAVEPOINT; COMMIT: its writes and the completion
 *                ├─ SkipMessageException ─▶ ROLLBACK TO SAVEPOINT; COMMIT: the completion only
 *                └─ any other error ──────▶ ROLLBACK: its writes and the claim; the record fails
 *
 * No lease: a dead worker's transaction is rolled back by the server. `RELEASE SAVEPOINT` proves the
 * transaction can commit (PostgreSQL answers the COMMIT of an aborted one with a silent ROLLBACK).
 */
export async function runInTransaction<T>(
  transactions: PostgresTransactions,
  /** The `claimInTransaction` statement. */
  claimStatement: PgQueryConfig,
  claim: (TransactionalClaim & { ttl: TtlParameter }) | undefined,
  run: (transaction: unknown) => Promise<T>,
): Promise<TransactionalRunAnswer<T>> {
  let skipped: unknown;
  try {
    const result = await transactions.transaction(async (tx, db) => {
      if (claim !== undefined) {
        // $4, the idle timeout, is a setting's value: a string.
        const values = [claim.key, claim.token, claim.ttl, String(Math.ceil(claim.idleTimeoutMs))];
        const answer = answerOf((await db.query<ClaimRow>({ ...claimStatement, values })).rows[0]);
        if (answer !== AcquireResult.ACQUIRED) throw new NotClaimed(answer);
      }
      const ran = await underHandlerSavepoint(db, () => run(tx));
      if ('value' in ran) return ran.value;
      skipped = ran.skipped; // committed with the completion alone, then thrown below
      return undefined;
    });
    if (skipped !== undefined) throw skipped;
    return { answer: AcquireResult.ACQUIRED, result: result as T };
  } catch (error) {
    if (error instanceof NotClaimed) return { answer: error.answer };
    throw error;
  }
}

/**
 * A batch handler's call on Postgres (`@SqsBatchHandler()`, transactional): every claim, the handler's
 * writes and the completions of the events that succeeded commit together.
 *
 *   BEGIN; claim each key (answers in order: won ones written completed); SAVEPOINT
 *   handler(tx, answers) ─┬─ resolves { release } ──▶ RELEASE SAVEPOINT; delete the released completions; COMMIT
 *                         ├─ SkipMessageException ─▶ ROLLBACK TO SAVEPOINT; COMMIT the completions alone
 *                         └─ any other error ──────▶ ROLLBACK: its writes and every claim
 *
 * The claims go one by one on the transaction's connection (one statement each); a key another open
 * transaction holds answers IN_PROGRESS at once, as for single records.
 */
export async function runBatchInTransaction<T>(
  transactions: PostgresTransactions,
  statements: { claimInTransaction: PgQueryConfig; releaseInTransaction: PgQueryConfig },
  claims: ReadonlyArray<TransactionalClaim & { ttl: TtlParameter }>,
  run: (transaction: unknown, answers: readonly AcquireResult[]) => Promise<TransactionalBatchRun<T>>,
): Promise<T> {
  let skipped: unknown;
  const result = await transactions.transaction(async (tx, db) => {
    const answers: AcquireResult[] = [];
    for (const claim of claims) {
      const values = [claim.key, claim.token, claim.ttl, String(Math.ceil(claim.idleTimeoutMs))];
      answers.push(
        answerOf((await db.query<ClaimRow>({ ...statements.claimInTransaction, values })).rows[0]),
      );
    }
    const handled = await underHandlerSavepoint(db, () => run(tx, answers));
    if ('skipped' in handled) {
      skipped = handled.skipped;
      return undefined;
    }
    const ran = handled.value;
    const released = ran.release.filter((i) => answers[i] === AcquireResult.ACQUIRED);
    if (released.length > 0) {
      const values = [released.map((i) => claims[i].key), released.map((i) => claims[i].token)];
      await db.query({ ...statements.releaseInTransaction, values });
    }
    return ran.result;
  });
  if (skipped !== undefined) throw skipped;
  return result as T;
}

const HANDLER_SAVEPOINT = 'nestjs_idempotent_sqs_handler';

/** PostgreSQL's "current transaction is aborted, commands ignored until end of transaction block". */
const IN_FAILED_TRANSACTION = '25P02';

/**
 * The handler's run under its savepoint: a `SkipMessageException` rolls back its writes alone (what the
 * claims wrote stays, to commit) and comes back as `skipped`; any other error is thrown as it is.
 */
async function underHandlerSavepoint<T>(
  db: PgQueryable,
  run: () => Promise<T>,
): Promise<{ value: T } | { skipped: unknown }> {
  await db.query({ text: `SAVEPOINT ${HANDLER_SAVEPOINT}` });
  let value: T;
  try {
    value = await run();
  } catch (error) {
    if (!isSkipMessageException(error)) throw error;
    await db.query({ text: `ROLLBACK TO SAVEPOINT ${HANDLER_SAVEPOINT}` });
    return { skipped: error };
  }
  await releaseHandlerSavepoint(db);
  return { value };
}

async function releaseHandlerSavepoint(db: PgQueryable): Promise<void> {
  try {
    await db.query({ text: `RELEASE SAVEPOINT ${HANDLER_SAVEPOINT}` });
  } catch (error) {
    if (codeOf(error) !== IN_FAILED_TRANSACTION) throw error;
    throw new Error(
      'the handler resolved, but a statement in its transaction had failed, which aborted the transaction: ' +
        'nothing it wrote was committed, and neither was the completion. Let the error out of the handler ' +
        '(or roll back to a savepoint of your own before going on).',
      { cause: error },
    );
  }
}

/** `pg`'s error code, also when an ORM wrapped the error (TypeORM's `QueryFailedError` keeps `driverError`). */
function codeOf(error: unknown): unknown {
  const found = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  return found?.code ?? found?.driverError?.code;
}

/** The claim was not won: the transaction rolls back and the answer goes out of it. */
class NotClaimed extends Error {
  constructor(readonly answer: AcquireResult.COMPLETED | AcquireResult.IN_PROGRESS) {
    super(`not claimed: ${answer}`);
  }
}
