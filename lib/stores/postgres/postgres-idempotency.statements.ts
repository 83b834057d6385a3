import { createHash } from 'node:crypto';
import { AcquireResult } from '../idempotency-store.interface';
import type { PgQueryConfig } from './postgres-client.interface';
import type { IdempotencyTable } from './postgres-idempotency.schema';

/**
 * The store protocol's SQL, one statement per step (atomic, one round trip), run on the pool or on a
 * client inside a transaction (which the step joins). Time is the database's `statement_timestamp()`;
 * statements are prepared by name (a digest of the text).
 *
 *   absent ──claim──▶ in progress (token, expires_at = now + lease)
 *                        │  ├──complete(token)──▶ completed (expires_at = now + ttl, or NULL: never)
 *                        │  └──release(token)───▶ absent
 *                        └──lease passes (worker crashed)──▶ expired: absent, the next claim takes it over
 */

/** `ttlMs` as the statements take it: whole milliseconds, or null for "never expires". */
export type TtlParameter = number | null;

const LIVE = (alias: string) =>
  `(${alias}.expires_at IS NULL OR ${alias}.expires_at > statement_timestamp())`;
const EXPIRY = (parameter: string) =>
  `statement_timestamp() + ${parameter}::float8 * interval '1 millisecond'`;

/**
 * Each step's statement for `table`, built once; `prepared`: by name, off for poolers that cannot
 * (PgBouncer before 1.21 in transaction mode). Each comment lists its parameters and what it answers.
 */
export function idempotencyStatements(table: IdempotencyTable, prepared: boolean) {
  const t = table.sql;
  const named = (step: string, text: string): PgQueryConfig => {
    const squeezed = text.replace(/\s+/g, ' ').trim();
    if (!prepared) return { text: squeezed };
    const digest = createHash('sha1').update(squeezed).digest('hex').slice(0, 16);
    return { name: `nestjs_idempotent_sqs_${step}_${digest}`, text: squeezed };
  };

  return {
    // $1 key · $2 token · $3 lease ms (null: none) · $4 fingerprint · $5 message id (null: none). A live
    // row answers for itself, with what its claim kept (a duplicate costs a read); else ON CONFLICT takes
    // over an expired row, so of concurrent claimers exactly one wins. A row taken after the snapshot
    // answers IN_PROGRESS, the answer that cannot lose a message.
    claim: named(
      'claim',
      `WITH found AS (
       SELECT completed, fingerprint, message_id FROM ${t} AS f WHERE f.key = $1 AND ${LIVE('f')}
     ), claimed AS (
       INSERT INTO ${t} AS i (key, token, completed, expires_at, fingerprint, message_id)
       SELECT $1, $2, false, ${EXPIRY('$3')}, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM found)
       ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, completed = false, expires_at = EXCLUDED.expires_at,
         fingerprint = EXCLUDED.fingerprint, message_id = EXCLUDED.message_id
         WHERE i.expires_at <= statement_timestamp()
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM claimed) AS acquired, found.completed, found.fingerprint, found.message_id
     FROM (SELECT 1) AS one LEFT JOIN found ON true`,
    ),

    // $1 key · $2 token · $3 ttl ms (null: forever) · $4 idle timeout ms. A transactional claim: a
    // non-blocking advisory lock gates it (a second transaction answers IN_PROGRESS at once), the row is
    // written completed (true at the commit), and the idle timeout ends a transaction held open too long.
    claimInTransaction: named(
      'claim_transaction',
      `WITH gate AS (
       SELECT pg_try_advisory_xact_lock(hashtextextended(${quoteLiteral(table.label)} || ':' || $1, 0)) AS locked,
              set_config('idle_in_transaction_session_timeout', $4, true) AS idle
     ), found AS (
       SELECT completed FROM ${t} AS f WHERE f.key = $1 AND ${LIVE('f')}
     ), claimed AS (
       INSERT INTO ${t} AS i (key, token, completed, expires_at)
       SELECT $1, $2, true, ${EXPIRY('$3')} FROM gate WHERE gate.locked AND NOT EXISTS (SELECT 1 FROM found)
       ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, completed = true, expires_at = EXCLUDED.expires_at,
         fingerprint = NULL, message_id = NULL
         WHERE i.expires_at <= statement_timestamp()
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM claimed) AS acquired, (SELECT completed FROM found) AS completed,
            (SELECT idle FROM gate) IS NOT NULL AS idle_set`,
    ),

    // $1 key · $2 token · $3 ttl ms (null: forever) → 1 row: completed. The caller's own claim, or a key
    // nobody holds; never another's live claim, nor a completed key twice.
    complete: named(
      'complete',
      `INSERT INTO ${t} AS i (key, token, completed, expires_at) VALUES ($1, $2, true, ${EXPIRY('$3')})
     ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, completed = true, expires_at = EXCLUDED.expires_at,
       fingerprint = CASE WHEN i.token = EXCLUDED.token THEN i.fingerprint END,
       message_id = CASE WHEN i.token = EXCLUDED.token THEN i.message_id END
       WHERE (i.token = EXCLUDED.token AND NOT i.completed) OR i.expires_at <= statement_timestamp()`,
    ),

    // $1 key · $2 token → ok: only the caller's own in-progress row is deleted.
    release: named(
      'release',
      `WITH released AS (
       DELETE FROM ${t} AS d WHERE d.key = $1 AND d.token = $2 AND NOT d.completed RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM released)
         OR NOT EXISTS (SELECT 1 FROM ${t} AS l WHERE l.key = $1 AND ${LIVE('l')}) AS ok`,
    ),

    // $1 key · $2 token · $3 lease ms (null: none) → 1 row: extended. An expired lease is not revived.
    extend: named(
      'extend',
      `UPDATE ${t} AS e SET expires_at = ${EXPIRY('$3')}
     WHERE e.key = $1 AND e.token = $2 AND NOT e.completed AND ${LIVE('e')}`,
    ),

    // $1 key → at most 1 row: completed, left_ms (null: no expiry). A plain read: no lock, no write.
    inspect: named(
      'inspect',
      `SELECT i.completed,
            floor(EXTRACT(EPOCH FROM (i.expires_at - statement_timestamp())) * 1000)::float8 AS left_ms
     FROM ${t} AS i WHERE i.key = $1 AND ${LIVE('i')}`,
    ),

    // $1 batch size → the rows deleted: locks at most $1 expired rows, skipping locked ones, never waiting.
    // $1 keys · $2 tokens → the completions a batch handler's transaction wrote for events it failed
    // (`runBatchInTransaction`): removed before the commit, so their redeliveries run again.
    releaseInTransaction: named(
      'release_transaction',
      `DELETE FROM ${t} AS d USING unnest($1::text[], $2::text[]) AS r(key, token)
     WHERE d.key = r.key AND d.token = r.token`,
    ),

    sweep: named(
      'sweep',
      `DELETE FROM ${t} AS d
     WHERE d.ctid = ANY (ARRAY(
       SELECT s.ctid FROM ${t} AS s WHERE s.expires_at <= statement_timestamp()
       LIMIT $1 FOR UPDATE SKIP LOCKED
     )) AND d.expires_at <= statement_timestamp()`,
    ),
  };
}

/** The statements of one store. */
export type IdempotencyStatements = ReturnType<typeof idempotencyStatements>;

/** What a claim statement answers: whether it won, and whether a live row holding the key is completed. */
export type ClaimRow = { acquired: boolean; completed: boolean | null };

/** What a claim statement's row says: won, or held by a completion or a live claim. */
export function answerOf(row: ClaimRow): AcquireResult {
  if (row.acquired) return AcquireResult.ACQUIRED;
  return row.completed === true ? AcquireResult.COMPLETED : AcquireResult.IN_PROGRESS;
}

/** `value` as an SQL string literal (single quotes doubled). */
function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
