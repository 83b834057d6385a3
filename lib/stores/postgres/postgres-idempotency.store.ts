import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Pool } from 'pg';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import { IdempotencyStoreUnavailableError } from '../idempotency-store.errors';
import {
  IdempotencyStoreClosedError,
  isMissingConnection,
  missingConnectionError,
} from '../connection-refusals';
import { optionalPeer } from '../../common/optional-peer';
import {
  AcquireAnswer,
  AcquireResult,
  FingerprintClaim,
  IdempotencyKeyInspection,
  IdempotencyStore,
  IdempotencyStoreWarning,
  TransactionalClaim,
  TransactionalBatchRun,
  TransactionalRunAnswer,
} from '../idempotency-store.interface';
import type { PgPoolOptions, PgQueryable, PgQueryConfig, PgQueryResult } from './postgres-client.interface';
import { ConnectionWatch, isConnectionFailure, WHILE_AWAY } from '../connection-watch';
import {
  checkFingerprintClaim,
  hasMethods,
  heldClaimAnswer,
  liveKeyInspection,
  startupTimeoutOf,
  wholeTtlMs,
} from '../store-helpers';
import { answerWithin } from '../../common/answer-within';
import { PostgresExpiredRowsSweeper, PostgresSweeperOptions } from './postgres-expired-rows.sweeper';
import {
  IdempotencyTable,
  PostgresIdempotencyTableOptions,
  resolveIdempotencyTable,
  verifyIdempotencyTable,
} from './postgres-idempotency.schema';
import {
  answerOf,
  ClaimRow,
  IdempotencyStatements,
  idempotencyStatements,
  TtlParameter,
} from './postgres-idempotency.statements';
import { runBatchInTransaction, runInTransaction } from './postgres-transactional-run';
import { pgTransactions, PgTransactionPool, PostgresTransactions } from './postgres-transactions';
import { OptionShape, readOptions } from '../../common/known-options';

/** Options of {@link PostgresIdempotencyStore}. */
export interface PostgresIdempotencyStoreOptions extends PostgresIdempotencyTableOptions {
  /**
   * Background deletion of expired rows (docs/stores/postgres.md), or `false` (call `sweepExpiredRows()`
   * yourself). Default `{ intervalMs: 60_000, batchSize: 1_000 }`.
   */
  sweeper?: PostgresSweeperOptions | false;
  /** Prepare statements by name once per connection. Default `true`; `false` behind a pooler that cannot (PgBouncer < 1.21). */
  preparedStatements?: boolean;
  /** A database unreachable at start-up stops the app. Default `false` (records fail closed until it answers). */
  failFastOnStartup?: boolean;
  /** How long the start-up check waits for the database, in milliseconds. Default 5 000. */
  startupTimeoutMs?: number;
}

const POSTGRES_OPTION_SHAPE: OptionShape<PostgresIdempotencyStoreOptions> = {
  table: 'string',
  schema: 'string',
  sweeper: [
    'boolean',
    { intervalMs: 'number', batchSize: 'number' } satisfies OptionShape<PostgresSweeperOptions>,
  ],
  preparedStatements: 'boolean',
  failFastOnStartup: 'boolean',
  startupTimeoutMs: 'number',
};

/** The longest finite TTL the store accepts: 10^15 ms; longer windows are `Infinity`. */
export const POSTGRES_MAX_TTL_MS = 1e15;

/**
 * Shares dedup state through one PostgreSQL table, over `pg`: each method one statement (an `INSERT
 * ... ON CONFLICT` claim gives a key to exactly one claimer), fenced by the token, expiring by the
 * database's clock, expired rows swept in the background. A claim can join the handler's own
 * transaction (`runInTransaction`), so its writes and its completion commit together.
 *
 * @example
 * ```ts
 * IdempotencyModule.forRootAsync({
 *   useFactory: () => ({ store: new PostgresIdempotencyStore(process.env.DATABASE_URL!), service: 'orders' }),
 * });
 * ```
 */
export class PostgresIdempotencyStore implements IdempotencyStore, OnModuleInit, OnApplicationShutdown {
  /** Every instance on the database shares its keys. */
  readonly shared = true;
  /** The longest finite TTL the store keeps ({@link POSTGRES_MAX_TTL_MS}); the module checks its options against it. */
  readonly maxTtlMs = POSTGRES_MAX_TTL_MS;
  /** The longest key a btree row of the primary key takes on 8 kB pages (2704 bytes less its header); checked at start-up. */
  readonly maxKeyBytes = 2692;
  /** A claim's fingerprint and message id are columns of its row. */
  readonly keepsFingerprints = true;
  private connected: PgQueryable | undefined;
  /** Where transactional handlers' transactions are opened (`undefined`: this store cannot). */
  private transactions: PostgresTransactions | undefined;
  private connecting: Promise<OwnedPool> | undefined;
  /** What the store builds its own pool from (`undefined` when it talks through yours). */
  private readonly ownedConnection: string | PgPoolOptions | undefined;
  /** The store creates its pool (from a connection string or options), so it ends it, and is closed for good then. */
  private readonly owned: boolean = false;
  private readonly resolvedTable: IdempotencyTable;
  private readonly sql: IdempotencyStatements;
  /** Sweeps in the background unless `sweeper: false`; `sweepExpiredRows()` runs it either way. */
  private readonly sweeper: PostgresExpiredRowsSweeper;
  private readonly failFastOnStartup: boolean;
  private readonly startupTimeoutMs: number;
  private readonly logger = new Logger('PostgresIdempotencyStore');
  private readonly found: IdempotencyStoreWarning[] = [];
  private readonly watch = new ConnectionWatch(
    this.logger,
    () => `PostgreSQL of the table ${this.table} (${this.describeDatabase()})`,
    (error) => {
      const code = (error as { code?: unknown }).code;
      const withCode = typeof code === 'string' ? `, ${code}` : '';
      return `: a database connection failed (${error.message}${withCode}): ${WHILE_AWAY}; the pool reconnects on the next statement.`;
    },
  );
  private closed = false;

  /** Runs a transactional handler's record in one transaction: present on a `pg` `Pool` or a transactions adapter. */
  readonly runInTransaction?: IdempotencyStore['runInTransaction'];
  /** Runs a transactional batch handler's call in one transaction: present where `runInTransaction` is. */
  readonly runBatchInTransaction?: IdempotencyStore['runBatchInTransaction'];

  /**
   * @param connection a `pg` `Pool` you own, a `PostgresTransactions` adapter, or a connection string
   *   or pool options for a pool the store creates (on its first statement) and ends with its app.
   *   `undefined` or `''` (an unset `DATABASE_URL`) is refused at start-up.
   */
  constructor(
    connection: PgQueryable | PostgresTransactions | string | PgPoolOptions,
    given: PostgresIdempotencyStoreOptions = {},
  ) {
    const options = readOptions(given, POSTGRES_OPTION_SHAPE, 'PostgresIdempotencyStore options');
    if (hasMethods<PgQueryable>(connection, 'query')) {
      this.connected = connection;
      const given = connection as PgTransactionPool & { totalCount?: unknown; pool?: unknown };
      if (hasMethods<PostgresTransactions>(given, 'transaction')) this.transactions = given;
      // A `pg` `Pool` (it lends connections), not a lone `Client`.
      else if (hasMethods(given, 'connect') && typeof given.totalCount === 'number') {
        this.transactions = pgTransactions(given);
      }
      // A pool built as `new Pool(...)` has no `error` listener: a database restart would kill the
      // process. An adapter (`pgTransactions`) names its pool.
      this.watch.watch(given.pool ?? connection, 'connect');
    } else if (
      typeof connection === 'string' ||
      typeof connection === 'object' ||
      isMissingConnection(connection)
    ) {
      // Nothing to connect to (an unset DATABASE_URL) is refused at start-up, not here: a store the
      // tests override is never started.
      this.ownedConnection = connection ?? undefined;
      this.owned = true;
    } else {
      throw new IdempotencyConfigurationError(
        'PostgresIdempotencyStore: pass a pg Pool, a postgres:// connection string or pg pool options, ' +
          `got ${typeof connection}.`, // null is refused at start-up, with undefined and ''
      );
    }
    this.resolvedTable = resolveIdempotencyTable(options);
    this.sql = idempotencyStatements(this.resolvedTable, options.preparedStatements ?? true);
    this.failFastOnStartup = options.failFastOnStartup ?? false;
    this.startupTimeoutMs = startupTimeoutOf(options, 'PostgresIdempotencyStore');
    if (this.transactions !== undefined || this.owned) {
      this.runInTransaction = (claim, run) => this.runTransaction(claim, run);
      this.runBatchInTransaction = (claims, run) => this.runBatchTransaction(claims, run);
    }
    this.sweeper = new PostgresExpiredRowsSweeper(
      async (batchSize) =>
        (await (await this.db()).query({ ...this.sql.sweep, values: [batchSize] })).rowCount ?? 0,
      options.sweeper,
      this.logger,
    );
  }

  /** The pool the store talks through: yours, or the one it created (`undefined` until its first statement). */
  get pool(): PgQueryable | undefined {
    return this.connected;
  }

  /** The table, as `schema.table` (or `table`, resolved through the `search_path`). */
  get table(): string {
    return this.resolvedTable.label;
  }

  /** Claims `key` for `ttlMs` (the lease) unless a live claim or completion holds it: one statement. */
  tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult>;
  /** With `claim`, the row keeps its fingerprint and message id; a live row answers with its own. */
  tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim): Promise<AcquireAnswer>;
  async tryAcquire(key: string, ttlMs: number, token: string, claim?: FingerprintClaim) {
    if (claim) checkFingerprintClaim(claim, 'PostgresIdempotencyStore');
    this.sweeper.start();
    const values = [key, token, toTtl(ttlMs), claim?.fingerprint ?? null, claim?.messageId ?? null];
    const [row] = (await this.query<HeldClaimRow>(this.sql.claim, values)).rows;
    const result = answerOf(row);
    return claim && !row.acquired ? heldClaimAnswer(result, row.fingerprint, row.message_id) : result;
  }

  /** Marks `key` completed for `ttlMs` if `token` still owns it (or nobody does); `false`: claim lost. */
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.query(this.sql.complete, [key, token, toTtl(ttlMs)])).rowCount === 1;
  }

  /** Deletes the claim of `token`; `true` when nothing live is left, `false` when another owns the key. */
  async forget(key: string, token: string): Promise<boolean> {
    return (await this.query<{ ok: boolean }>(this.sql.release, [key, token])).rows[0].ok;
  }

  /** Renews the live claim of `token` to `ttlMs` from now; `false` when it expired or was taken. */
  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    return (await this.query(this.sql.extend, [key, token, toTtl(ttlMs)])).rowCount === 1;
  }

  /** What the table holds for `key` (one `SELECT`, no lock), for the Center's lookup. */
  async inspect(key: string): Promise<IdempotencyKeyInspection> {
    const [row] = (await this.query<InspectRow>(this.sql.inspect, [key])).rows;
    if (row === undefined) return { state: 'UNKNOWN' };
    const left = row.left_ms === null ? undefined : Math.max(0, Number(row.left_ms));
    return liveKeyInspection(row.completed, left);
  }

  /** Deletes expired rows now, as the sweeper does; resolves with how many. */
  sweepExpiredRows(): Promise<number> {
    return this.sweeper.runOnce();
  }

  /** Checks the table (`onModuleInit` runs it); throws saying how to create it; logs what is risky. */
  async verifyTable(): Promise<void> {
    for (const warning of await verifyIdempotencyTable(await this.db(), this.resolvedTable)) {
      if (this.found.some((known) => known.code === warning.code)) continue;
      this.found.push(warning);
      this.logger.warn(warning.message);
    }
  }

  /** What the check found risky (an UNLOGGED table, `fsync` or `synchronous_commit` off). */
  get warnings(): readonly IdempotencyStoreWarning[] {
    return this.found;
  }

  /**
   * Stops the sweeper and ends the pool the store created, whatever built it, and the store with it: used
   * again, it refuses. Yours stays open, without the store's listener.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watch.stop();
    await this.sweeper.stop();
    if (!this.owned) return;
    const pool = await this.connecting?.catch(() => undefined);
    this.connecting = undefined;
    this.connected = undefined;
    this.transactions = undefined;
    await pool?.end();
  }

  /** Starts the sweeper and checks the table (a database that does not answer stops it with `failFastOnStartup`). */
  async onModuleInit(): Promise<void> {
    const refused = this.refusal();
    if (refused) throw refused;
    try {
      await answerWithin(this.verifyTable(), this.startupTimeoutMs, 'no answer');
    } catch (error) {
      if (error instanceof IdempotencyConfigurationError || this.failFastOnStartup) {
        // The app will not start: nothing of the store's may keep the process alive.
        await this.close().catch(() => undefined);
        if (error instanceof IdempotencyConfigurationError) throw error;
        throw new IdempotencyStoreUnavailableError(
          'PostgresIdempotencyStore',
          this.describeDatabase(),
          error,
        );
      }
      this.logger.warn(
        `Could not check the table ${this.table} at start-up (${error instanceof Error ? error.message : String(error)}): ` +
          'records fail closed until the database answers.',
      );
    }
    this.sweeper.start();
  }

  /** Nest lifecycle hook: stops the sweeper and ends an owned pool when the application shuts down. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private async runTransaction<T>(
    claim: TransactionalClaim | undefined,
    run: (transaction: unknown) => Promise<T>,
  ): Promise<TransactionalRunAnswer<T>> {
    if (this.transactions === undefined) await this.connect();
    if (claim !== undefined) this.sweeper.start();
    return runInTransaction(
      this.transactions!,
      this.sql.claimInTransaction,
      claim && { ...claim, ttl: toTtl(claim.ttlMs) },
      run,
    );
  }

  private async runBatchTransaction<T>(
    claims: readonly TransactionalClaim[],
    run: (transaction: unknown, answers: readonly AcquireResult[]) => Promise<TransactionalBatchRun<T>>,
  ): Promise<T> {
    if (this.transactions === undefined) await this.connect();
    if (claims.length > 0) this.sweeper.start();
    return runBatchInTransaction(
      this.transactions!,
      this.sql,
      claims.map((claim) => ({ ...claim, ttl: toTtl(claim.ttlMs) })),
      run,
    );
  }

  /** Runs a step's statement; a lost connection starts the outage warning whichever statement met it. */
  private async query<Row>(statement: PgQueryConfig, values: unknown[]): Promise<PgQueryResult<Row>> {
    return (await this.db()).query<Row>({ ...statement, values }).catch((error: unknown) => {
      if (isConnectionFailure(error)) this.watch.down(error as Error);
      throw error;
    });
  }

  private async db(): Promise<PgQueryable> {
    return this.connected ?? this.connect();
  }

  /** Creates the owned pool on first use (loading pg then, so apps without this store need none). */
  private connect(): Promise<OwnedPool> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    this.connecting ??= createOwnedPool(this.ownedConnection!).then((pool) => {
      this.watch.watch(pool, 'connect');
      this.transactions = pgTransactions(pool);
      return (this.connected = pool);
    });
    return this.connecting;
  }

  /** Why an owned pool cannot be made: the store was closed, or given nothing to connect to. */
  private refusal(): Error | undefined {
    if (!this.owned) return undefined;
    if (this.closed)
      return new IdempotencyStoreClosedError('PostgresIdempotencyStore', this.describeDatabase());
    if (isMissingConnection(this.ownedConnection)) {
      return missingConnectionError(
        'PostgresIdempotencyStore',
        this.ownedConnection,
        'DATABASE_URL',
        'Give a postgres:// connection string, pg pool options ({ host, database, ... }) or a pg Pool.',
      );
    }
    return undefined;
  }

  /** Where the store connects, for errors: the URL without its password, or host, port and database. */
  private describeDatabase(): string {
    const connection =
      this.ownedConnection ?? (this.connected as { options?: PgPoolOptions } | undefined)?.options;
    const settings = typeof connection === 'object' ? connection : {};
    const url = typeof connection === 'string' ? connection : settings.connectionString;
    if (typeof url === 'string') return url.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@');
    // pg's own defaults where the options name none.
    const { PGHOST, PGPORT, PGDATABASE } = process.env;
    return `PostgreSQL at ${settings.host ?? PGHOST ?? 'localhost'}:${settings.port ?? PGPORT ?? 5432}/${settings.database ?? PGDATABASE ?? '(default database)'}`;
  }
}

/** A claim's row: with what the live row holding the key kept (`tryAcquire`). */
type HeldClaimRow = ClaimRow & { fingerprint: string | null; message_id: string | null };

/** An inspected row: completed or in progress, and the time left (null: no expiry). */
type InspectRow = { completed: boolean; left_ms: number | null };

/** A TTL as the statements take it: whole milliseconds (rounded up), or null for "never expires". */
function toTtl(ttlMs: number): TtlParameter {
  return wholeTtlMs(ttlMs, 'PostgresIdempotencyStore', POSTGRES_MAX_TTL_MS) ?? null;
}

const loadPg = optionalPeer(
  'pg',
  'PostgresIdempotencyStore (connecting from a connection string or options)',
  () => import('pg'),
);

/** The store's own pool under the user's settings: a hung statement or connect fails after 5 s. */
const OWNED_POOL_DEFAULTS = { connectionTimeoutMillis: 5_000, statement_timeout: 5_000 };

/** The pool the store creates: it runs statements and transactions, and is ended by the store. */
type OwnedPool = PgTransactionPool & { end(): Promise<void> };

async function createOwnedPool(connection: string | PgPoolOptions): Promise<OwnedPool> {
  const pg = await loadPg();
  // The ES build of pg 8.15+ names its exports; older ones (and the CommonJS interop) hold them on `default`.
  const PoolClass: typeof Pool =
    pg.Pool ?? (pg as unknown as { default: { Pool: typeof Pool } }).default.Pool;
  return new PoolClass(
    typeof connection === 'string'
      ? { ...OWNED_POOL_DEFAULTS, connectionString: connection }
      : { ...OWNED_POOL_DEFAULTS, ...connection },
  );
}
