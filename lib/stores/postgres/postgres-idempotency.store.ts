import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Pool } from 'pg';
import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import { IdempotencyStoreUnavailableError } from '../idempotency-store.errors';
import { optionalPeer } from '../../common/optional-peer';
import { checkFingerprintClaim } from '../fingerprint-claim.check';
import {
  AcquireResult,
  FingerprintClaim,
  FingerprintedAcquireAnswer,
  IdempotencyKeyInspection,
  IdempotencyStore,
  IdempotencyStoreWarning,
  TransactionalClaim,
  TransactionalRunAnswer,
} from '../idempotency-store.interface';
import type { PgPoolOptions, PgQueryable } from './postgres-client.interface';
import { PostgresConnectionWatch } from './postgres-connection-watch';
import { PostgresExpiredRowsSweeper, PostgresSweeperOptions } from './postgres-expired-rows.sweeper';
import {
  explainMissingFingerprintColumns,
  IdempotencyTable,
  PostgresIdempotencyTableOptions,
  resolveIdempotencyTable,
  verifyIdempotencyTable,
} from './postgres-idempotency.schema';
import { PostgresIdempotencyStatements, TtlParameter } from './postgres-idempotency.statements';
import { runInTransaction } from './postgres-transactional-run';
import {
  isPgPool,
  isPostgresTransactions,
  pgTransactions,
  PgTransactionPool,
  PostgresTransactions,
} from './postgres-transactions';

/** Options of {@link PostgresIdempotencyStore}. */
export interface PostgresIdempotencyStoreOptions extends PostgresIdempotencyTableOptions {
  /**
   * The background deletion of expired rows (see docs/stores/postgres.md), or `false` to
   * run none (then call `sweepExpiredRows()` from a scheduler of yours, or rows are never deleted).
   * Default `{ intervalMs: 60_000, batchSize: 1_000 }`.
   */
  sweeper?: PostgresSweeperOptions | false;
  /**
   * Prepare the store's statements by name, once per connection (the server then only binds them).
   * Default `true`. Set `false` behind a pooler that cannot keep prepared statements (PgBouncer
   * before 1.21 in transaction mode).
   */
  preparedStatements?: boolean;
  /**
   * When the database cannot be reached at start-up (`onModuleInit`), stop the application's start
   * with an `IdempotencyStoreUnavailableError`. Default `false`: the app starts, logs that it could
   * not check the table, and its records fail closed until the database answers. A table that is
   * missing or of the wrong shape stops the start either way.
   */
  failFastOnStartup?: boolean;
  /** How long the start-up check waits for the database, in milliseconds. Default 5 000. */
  startupTimeoutMs?: number;
}

/**
 * The longest finite TTL the store accepts, in milliseconds: 10^15 ms, about 31,700 years, far
 * inside what a `timestamptz` can hold. Longer dedup windows are `Infinity` (no expiry).
 */
export const POSTGRES_MAX_TTL_MS = 1e15;

/**
 * The longest key the table's primary key index takes, in bytes: a btree row holds at most 2704 bytes
 * on PostgreSQL's default 8 kB pages, and the row's header (8) and the value's length (4) take 12.
 * Measured: 2692 bytes of incompressible text go in, 2693 are refused.
 */
export const POSTGRES_MAX_KEY_BYTES = 2692;

/**
 * Shares dedup state between instances through one PostgreSQL table, over `pg` (node-postgres).
 *
 * Why it looks the way it does:
 * - Each method is one statement, so one round trip that decides and writes atomically: the claim
 *   is an `INSERT ... ON CONFLICT (key) DO UPDATE ... WHERE <the row expired>`, which gives a key to
 *   exactly one of any number of concurrent claimers, and answers a duplicate from a read alone.
 * - Fencing: the row holds the claiming attempt's token; completing, releasing and extending act
 *   only while it still does, and answer `false` otherwise.
 * - Expiry is judged by the database's clock, never the app hosts'; `ttl: Infinity` is a NULL expiry.
 * - Expired rows count as absent at once and are deleted in the background, in small batches that
 *   skip locked rows (`sweeper`).
 * - The statements take an executor (the pool, or a client inside a transaction), so a claim can
 *   join the transaction of the handler's own writes: transactional handlers
 *   (`@Idempotent({ transactional: true })`, see `runInTransaction`) commit their writes and their
 *   completion together, on a `pg` `Pool` (the store's own, or yours) or through an adapter such as
 *   `typeOrmTransactions(dataSource)`.
 *
 * `pg` stays an optional peer dependency: the store takes anything with `pg`'s `query(config)` (a
 * `Pool` you own), and loads `pg` itself only to create the pool it owns from a connection string or
 * options.
 *
 * @example
 * ```ts
 * // A pool the store creates, owns and ends on application shutdown:
 * IdempotencyModule.forRoot({ store: new PostgresIdempotencyStore(process.env.DATABASE_URL!), service: 'orders' });
 *
 * // Or a pool you own (and end), with the table in a schema of yours:
 * const pool = new Pool({ connectionString: process.env.DATABASE_URL });
 * IdempotencyModule.forRoot({ store: new PostgresIdempotencyStore(pool, { schema: 'billing' }), service: 'billing' });
 * ```
 */
export class PostgresIdempotencyStore implements IdempotencyStore, OnModuleInit, OnApplicationShutdown {
  /**
   * Shared between processes: every instance on the database sees the same keys, so keys must carry
   * the service's identity (the module requires one for a shared store).
   */
  readonly shared = true;
  /** The longest finite TTL the store keeps ({@link POSTGRES_MAX_TTL_MS}); the module checks its options against it. */
  readonly maxTtlMs = POSTGRES_MAX_TTL_MS;
  /** The longest key the primary key index takes ({@link POSTGRES_MAX_KEY_BYTES}); checked at start-up. */
  readonly maxKeyBytes = POSTGRES_MAX_KEY_BYTES;
  private connected: PgQueryable | undefined;
  /** Where transactional handlers' transactions are opened (`undefined`: this store cannot). */
  private transactions: PostgresTransactions | undefined;
  private connecting: Promise<OwnedPool> | undefined;
  private readonly ownedConnection: string | PgPoolOptions | undefined;
  private readonly resolvedTable: IdempotencyTable;
  private readonly statements: PostgresIdempotencyStatements;
  /** Sweeps in the background unless `sweeper: false`; `sweepExpiredRows()` runs it either way. */
  private readonly sweeper: PostgresExpiredRowsSweeper;
  private readonly sweepInBackground: boolean;
  private readonly failFastOnStartup: boolean;
  private readonly startupTimeoutMs: number;
  private readonly logger = new Logger('PostgresIdempotencyStore');
  private readonly found: IdempotencyStoreWarning[] = [];
  /** Logs the database going away and coming back, and keeps a broken idle connection from crashing the process. */
  private readonly watch = new PostgresConnectionWatch(
    () => `PostgreSQL of the table ${this.table} (${this.describeDatabase()})`,
    this.logger,
  );
  private closed = false;

  /**
   * Runs a transactional handler's record in one transaction (see `postgres-transactional-run.ts`):
   * present when the store can open transactions: on a `pg` `Pool` (yours or its own, from a
   * connection string or options) or a `PostgresTransactions` adapter (`pgTransactions`,
   * `typeOrmTransactions`); absent on a lone `Client` or another executor, and then the module
   * refuses transactional handlers at bootstrap.
   */
  readonly runInTransaction?: <T>(
    claim: TransactionalClaim | undefined,
    run: (transaction: unknown) => Promise<T>,
  ) => Promise<TransactionalRunAnswer<T>>;

  /**
   * @param connection a `pg` `Pool` you own (or anything that runs statements as it does), a
   *   `PostgresTransactions` adapter (`typeOrmTransactions(dataSource)`, `pgTransactions(pool)`), or a
   *   `postgres://` connection string or `pg` pool options from which the store creates its own pool
   *   (on its first statement; ended when the application shuts down).
   */
  constructor(
    connection: PgQueryable | PostgresTransactions | string | PgPoolOptions,
    options: PostgresIdempotencyStoreOptions = {},
  ) {
    if (isPostgresTransactions(connection)) {
      this.connected = connection;
      this.transactions = connection;
      this.watch.watch(poolOf(connection));
    } else if (isPool(connection)) {
      this.connected = connection;
      if (isPgPool(connection)) this.transactions = pgTransactions(connection);
      // A pool built as `new Pool(...)` has no `error` listener: a database restart would kill the process.
      this.watch.watch(connection);
    } else if (typeof connection === 'string' || (typeof connection === 'object' && connection !== null)) {
      this.ownedConnection = connection;
    } else {
      throw new TypeError(
        'PostgresIdempotencyStore: pass a pg Pool, a postgres:// connection string or pg pool options, ' +
          `got ${connection === null ? 'null' : typeof connection}.`,
      );
    }
    this.resolvedTable = resolveIdempotencyTable(options);
    this.statements = new PostgresIdempotencyStatements(
      this.resolvedTable,
      options.preparedStatements ?? true,
    );
    this.failFastOnStartup = options.failFastOnStartup ?? false;
    this.startupTimeoutMs = options.startupTimeoutMs ?? 5_000;
    if (!(this.startupTimeoutMs > 0)) {
      throw new RangeError(
        `PostgresIdempotencyStore: startupTimeoutMs must be a positive number of milliseconds, got ${options.startupTimeoutMs}.`,
      );
    }
    if (this.transactions !== undefined || this.ownedConnection !== undefined) {
      this.runInTransaction = (claim, run) => this.runTransaction(claim, run);
    }
    this.sweepInBackground = options.sweeper !== false;
    this.sweeper = new PostgresExpiredRowsSweeper(
      async (batchSize) => this.statements.sweep(await this.db(), batchSize),
      options.sweeper || {},
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
  async tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    if (this.sweepInBackground) this.sweeper.start();
    return this.statements
      .claim(this.connected ?? (await this.connect()), key, token, toTtl(ttlMs))
      .catch(this.explain);
  }

  /**
   * `tryAcquire` that also keeps the claim's fingerprint and message id in the row, and answers the
   * ones a live row holds: one statement.
   */
  async tryAcquireWithFingerprint(
    key: string,
    ttlMs: number,
    token: string,
    claim: FingerprintClaim,
  ): Promise<FingerprintedAcquireAnswer> {
    checkFingerprintClaim(claim, 'PostgresIdempotencyStore');
    if (this.sweepInBackground) this.sweeper.start();
    return this.statements
      .claimWithFingerprint(this.connected ?? (await this.connect()), key, token, toTtl(ttlMs), claim)
      .catch(this.explain);
  }

  /** Marks `key` completed for `ttlMs` if `token` still owns it (or nobody does); `false`: claim lost. */
  async markComplete(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.statements
      .complete(this.connected ?? (await this.connect()), key, token, toTtl(ttlMs))
      .catch(this.explain);
  }

  /** Deletes the claim of `token`; `true` when nothing live is left, `false` when another owns the key. */
  async forget(key: string, token: string): Promise<boolean> {
    return this.statements.release(this.connected ?? (await this.connect()), key, token);
  }

  /** Renews the live claim of `token` to `ttlMs` from now; `false` when it expired or was taken. */
  async extend(key: string, ttlMs: number, token: string): Promise<boolean> {
    return this.statements.extend(this.connected ?? (await this.connect()), key, token, toTtl(ttlMs));
  }

  /**
   * What the table holds for `key`, read-only (one `SELECT`, no lock), for the Idempotency Center's
   * key lookup. Never writes, and never extends a lease.
   */
  async inspect(key: string): Promise<IdempotencyKeyInspection> {
    return this.statements.inspect(this.connected ?? (await this.connect()), key);
  }

  /**
   * Deletes expired rows now, in batches, as the background sweeper does; resolves with how many.
   * For a scheduler of yours when `sweeper: false`, and for operators.
   */
  sweepExpiredRows(): Promise<number> {
    return this.sweeper.runOnce();
  }

  /**
   * Checks that the table exists with the store's columns, a unique key and the rights the store
   * needs, on a connection that can write; throws an `IdempotencyConfigurationError` saying how to
   * create it otherwise. What is risky but works is logged once and kept in `warnings`.
   * `onModuleInit` runs it; call it yourself outside Nest.
   */
  async verifyTable(): Promise<void> {
    for (const warning of await verifyIdempotencyTable(await this.db(), this.resolvedTable)) {
      if (this.found.some((known) => known.code === warning.code)) continue;
      this.found.push(warning);
      this.logger.warn(warning.message);
    }
  }

  /**
   * What the start-up check found risky about the table or the server (an UNLOGGED table, `fsync`
   * or `synchronous_commit` off: a crash of the database could lose keys), each also logged once.
   */
  get warnings(): readonly IdempotencyStoreWarning[] {
    return this.found;
  }

  /**
   * Stops the sweeper and ends the pool the store created; a pool you passed in stays open (it is
   * yours). Statements already sent finish first.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watch.stop();
    await this.sweeper.stop();
    if (this.ownedConnection === undefined) return;
    const pool = await this.connecting?.catch(() => undefined);
    await pool?.end();
  }

  /**
   * Nest lifecycle hook: starts the sweeper and checks the table. A missing or misshapen table stops
   * the application's start with an error saying how to create it. A database that does not answer
   * within `startupTimeoutMs` stops it too with `failFastOnStartup` (`IdempotencyStoreUnavailableError`);
   * otherwise the app starts and records fail closed until the database answers.
   */
  async onModuleInit(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${this.startupTimeoutMs} ms`)),
          this.startupTimeoutMs,
        );
      });
      await Promise.race([this.verifyTable(), timedOut]);
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
    } finally {
      clearTimeout(timer);
    }
    if (this.sweepInBackground) this.sweeper.start();
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
    if (claim !== undefined && this.sweepInBackground) this.sweeper.start();
    return runInTransaction(
      this.transactions!,
      this.statements,
      claim && { ...claim, ttl: toTtl(claim.ttlMs) },
      run,
    );
  }

  /** Rethrows a statement's error, explaining missing fingerprint columns (a table from before them). */
  private readonly explain = (error: unknown): never => {
    this.watch.failed(error);
    throw explainMissingFingerprintColumns(error, this.resolvedTable);
  };

  private async db(): Promise<PgQueryable> {
    return this.connected ?? this.connect();
  }

  /** Creates the owned pool on first use (loading pg then, so apps without this store need none). */
  private connect(): Promise<OwnedPool> {
    if (this.closed && !this.connecting) {
      return Promise.reject(new Error(`PostgresIdempotencyStore on ${this.table} was closed.`));
    }
    this.connecting ??= createOwnedPool(this.ownedConnection!).then((pool) => {
      this.watch.watch(pool);
      this.transactions = pgTransactions(pool);
      return (this.connected = pool);
    });
    return this.connecting;
  }

  /** Where the store connects, for errors: the URL without its password, or host, port and database. */
  private describeDatabase(): string {
    const connection =
      this.ownedConnection ?? (this.connected as { options?: PgPoolOptions } | undefined)?.options;
    if (typeof connection === 'string') return connection.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@');
    const settings = connection ?? {};
    if (typeof settings.connectionString === 'string') {
      return settings.connectionString.replace(/\/\/([^:@/]*)(:[^@/]*)?@/, '//$1@');
    }
    return `PostgreSQL at ${settings.host ?? 'localhost'}:${settings.port ?? 5432}/${settings.database ?? '(default database)'}`;
  }
}

/** A TTL as the statements take it: whole milliseconds (rounded up), or null for "never expires". */
function toTtl(ttlMs: number): TtlParameter {
  if (ttlMs === Infinity) return null;
  if (!(ttlMs > 0) || ttlMs > POSTGRES_MAX_TTL_MS) {
    throw new RangeError(
      `PostgresIdempotencyStore: a TTL must be a positive number of milliseconds up to ${POSTGRES_MAX_TTL_MS} ` +
        `(or Infinity for no expiry), got ${ttlMs}.`,
    );
  }
  return Math.ceil(ttlMs);
}

/** The pool behind a transactions adapter (`pgTransactions` keeps it), for its events. */
function poolOf(transactions: PostgresTransactions): unknown {
  return (transactions as { pool?: unknown }).pool ?? transactions;
}

function isPool(connection: unknown): connection is PgQueryable {
  return (
    typeof connection === 'object' &&
    connection !== null &&
    typeof (connection as { query?: unknown }).query === 'function'
  );
}

const loadPg = optionalPeer(
  'pg',
  'PostgresIdempotencyStore (connecting from a connection string or options)',
  () => import('pg'),
);

/**
 * Settings of the pool the store creates, under the user's: a statement or a connection attempt
 * that hangs fails the record (closed) after 5 s instead of holding it forever.
 */
const OWNED_POOL_DEFAULTS = { connectionTimeoutMillis: 5_000, statement_timeout: 5_000 };

/** The pool the store creates: it runs statements and transactions, and is ended by the store. */
type OwnedPool = PgTransactionPool & { end(): Promise<void> };

async function createOwnedPool(connection: string | PgPoolOptions): Promise<OwnedPool> {
  const pg = await loadPg();
  // The ES build of pg 8.15+ names its exports; older ones (and the CommonJS interop) hold them on `default`.
  const PoolClass: typeof Pool =
    pg.Pool ?? (pg as unknown as { default: { Pool: typeof Pool } }).default.Pool;
  const pool = new PoolClass(
    typeof connection === 'string'
      ? { ...OWNED_POOL_DEFAULTS, connectionString: connection }
      : { ...OWNED_POOL_DEFAULTS, ...connection },
  );
  return pool;
}
