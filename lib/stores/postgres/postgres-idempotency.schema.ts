import { IdempotencyConfigurationError } from '../../common/sqs-idempotency.error';
import type { IdempotencyStoreWarning } from '../idempotency-store.interface';
import type { PgQueryable } from './postgres-client.interface';

/**
 * The store's table (name quoted), its DDL and the start-up check. One row per key; `expires_at` ends
 * the lease, then the dedup window (NULL: never), and past it the row counts as absent. `key` is
 * `COLLATE "C"`: keys are opaque bytes.
 */

/** Where the store keeps its rows. */
export interface PostgresIdempotencyTableOptions {
  /** The table's name. Default `'idempotency_keys'`. */
  table?: string;
  /** The table's schema. Default: none (the `search_path`). */
  schema?: string;
}

/** The table, resolved once: its names as SQL (quoted) and as people read them. */
export interface IdempotencyTable {
  /** `"schema"."table"` or `"table"`: safe to paste into SQL whatever the names hold. */
  readonly sql: string;
  /** `schema.table` or `table`, for messages. */
  readonly label: string;
  readonly options: Required<Pick<PostgresIdempotencyTableOptions, 'table'>> &
    PostgresIdempotencyTableOptions;
}

const DEFAULT_TABLE = 'idempotency_keys';
/** Postgres silently truncates longer identifiers (NAMEDATALEN - 1 bytes). */
const MAX_IDENTIFIER_BYTES = 63;

/** Resolves and checks the names; throws a `TypeError` naming the bad one. */
export function resolveIdempotencyTable(options: PostgresIdempotencyTableOptions = {}): IdempotencyTable {
  const table = options.table ?? DEFAULT_TABLE;
  checkIdentifier('table', table);
  if (options.schema !== undefined) checkIdentifier('schema', options.schema);
  const schemaSql = options.schema === undefined ? '' : `${quoteIdentifier(options.schema)}.`;
  return {
    sql: schemaSql + quoteIdentifier(table),
    label: options.schema === undefined ? table : `${options.schema}.${table}`,
    options: { ...options, table },
  };
}

/** `name` as a Postgres quoted identifier: in double quotes, inner double quotes doubled. */
function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function checkIdentifier(what: 'table' | 'schema', name: unknown): void {
  const problem =
    typeof name !== 'string' || name.length === 0
      ? `must be a non-empty string, got ${String(name)}`
      : name.includes('\u0000')
        ? 'cannot hold a NUL character'
        : Buffer.byteLength(name, 'utf8') > MAX_IDENTIFIER_BYTES
          ? `"${name}" is longer than ${MAX_IDENTIFIER_BYTES} bytes; ` +
            'Postgres would silently cut it. Pick a shorter one'
          : undefined;
  if (problem)
    throw new IdempotencyConfigurationError(`PostgresIdempotencyStore: the ${what} name ${problem}.`);
}

/**
 * The DDL of the table and its expiry index, for a migration tool (`IF NOT EXISTS` throughout).
 *
 * @example
 * ```ts
 * await queryRunner.query(idempotencyTableDdl({ schema: 'billing' }));
 * ```
 */
export function idempotencyTableDdl(options: PostgresIdempotencyTableOptions = {}): string {
  const table = resolveIdempotencyTable(options);
  // An index lives in its table's schema: its name is not qualified.
  const index = quoteIdentifier(`${table.options.table}_expires_at_idx`);
  return [
    ...(options.schema === undefined
      ? []
      : [`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(options.schema)};`]),
    `CREATE TABLE IF NOT EXISTS ${table.sql} (`,
    '  key        text COLLATE "C" PRIMARY KEY,',
    '  token      text        NOT NULL,',
    '  completed  boolean     NOT NULL DEFAULT false,',
    '  expires_at timestamptz,',
    '  fingerprint text,',
    '  message_id text',
    ');',
    `CREATE INDEX IF NOT EXISTS ${index} ON ${table.sql} (expires_at);`,
  ].join('\n');
}

/**
 * Creates the table and its index if missing, under an advisory lock (instances starting together);
 * needs the right to create tables, else run {@link idempotencyTableDdl} in a migration.
 *
 * @example
 * ```ts
 * await createIdempotencyTable(pool, { schema: 'billing', table: 'inbox' });
 * ```
 */
export async function createIdempotencyTable(
  db: PgQueryable,
  options: PostgresIdempotencyTableOptions = {},
): Promise<void> {
  const ddl = idempotencyTableDdl(options);
  // One DO block is one statement, so one transaction, whatever protocol the client speaks; the
  // dollar-quote tag cannot occur in the DDL (quoted names could hold `$$`).
  let tag = 'ddl';
  while (ddl.includes(`$${tag}$`)) tag += '_';
  await db.query({
    text:
      `DO $${tag}$ BEGIN\n` +
      `PERFORM pg_advisory_xact_lock(hashtext('nestjs-idempotent-sqs: create the idempotency table'));\n` +
      `${ddl}\nEND $${tag}$`,
  });
}

/** Column name → the types the store can work with (as `format_type` spells them). */
const EXPECTED_COLUMNS: Record<string, readonly string[]> = {
  key: ['text', 'character varying'],
  token: ['text', 'character varying'],
  completed: ['boolean'],
  expires_at: ['timestamp with time zone'],
  fingerprint: ['text', 'character varying'],
  message_id: ['text', 'character varying'],
};

interface TableFacts {
  kind: string | null;
  persistence: string | null;
  columns: Array<{ name: string; type: string }> | null;
  key_unique: boolean | null;
  writable: boolean | null;
  read_only: string;
  fsync: string;
  synchronous_commit: string;
}

/**
 * The start-up check: the table, its columns, a unique key and the store's rights, on a writable
 * connection; throws saying how to create it. Resolves with what is risky but works.
 */
export async function verifyIdempotencyTable(
  db: PgQueryable,
  table: IdempotencyTable,
): Promise<IdempotencyStoreWarning[]> {
  const { rows } = await db.query<TableFacts>({
    text: `SELECT c.relkind::text AS kind, c.relpersistence::text AS persistence,
         (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod)))
            FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
         EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                  WHERE i.indrelid = c.oid AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
                    AND a.attname = 'key') AS key_unique,
         has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE') AS writable,
         current_setting('transaction_read_only') AS read_only,
         current_setting('fsync') AS fsync,
         current_setting('synchronous_commit') AS synchronous_commit
       FROM (SELECT to_regclass($1::text) AS oid) r LEFT JOIN pg_class c ON c.oid = r.oid`,
    values: [table.sql],
  });
  const facts = rows[0];
  const problems = problemsOf(facts);
  if (problems.length > 0) {
    const { options } = table;
    const named = [options.schema === undefined ? '' : `schema: ${JSON.stringify(options.schema)}`]
      .concat(options.table === DEFAULT_TABLE ? [] : [`table: ${JSON.stringify(options.table)}`])
      .filter(Boolean);
    const helperArgs = named.length === 0 ? '' : `, { ${named.join(', ')} }`;
    throw new IdempotencyConfigurationError(
      `PostgresIdempotencyStore: the table ${table.label} ${problems.join('; ')}. ` +
        (facts?.kind == null
          ? `Create it once: await createIdempotencyTable(pool${helperArgs}) from 'nestjs-idempotent-sqs/postgres', ` +
            `or run this in a migration:\n${idempotencyTableDdl(options)}`
          : `The store needs this shape (see idempotencyTableDdl()):\n${idempotencyTableDdl(options)}`),
    );
  }
  return warningsOf(facts, table);
}

function warningsOf(facts: TableFacts, table: IdempotencyTable): IdempotencyStoreWarning[] {
  const warnings: IdempotencyStoreWarning[] = [];
  if (facts.persistence === 'u') {
    warnings.push({
      code: 'postgres.unlogged-table',
      setting: `${table.label} UNLOGGED`,
      message:
        `The table ${table.label} is UNLOGGED: a crash of the database empties it, and every key it remembered is ` +
        `run again when redelivered. Make it logged: ALTER TABLE ${table.sql} SET LOGGED.`,
    });
  }
  if (facts.fsync === 'off') {
    warnings.push({
      code: 'postgres.fsync',
      setting: 'fsync off',
      message:
        'The database runs with fsync off: a crash of its machine can lose or corrupt recent claims and completions. Turn fsync on.',
    });
  }
  if (facts.synchronous_commit === 'off') {
    warnings.push({
      code: 'postgres.synchronous-commit',
      setting: 'synchronous_commit off',
      message:
        "The store's connections commit asynchronously: a crash of the database can lose its last few hundred " +
        'milliseconds of claims and completions (their events may run again). Faster; keep it only if that is acceptable.',
    });
  }
  return warnings;
}

/** What keeps the table from working. */
function problemsOf(facts: TableFacts | undefined): string[] {
  if (!facts || facts.kind == null) return ['does not exist (in the schema searched)'];
  if (facts.kind !== 'r' && facts.kind !== 'p') return ['is not a table'];
  const problems: string[] = [];
  const columns = new Map((facts.columns ?? []).map((column) => [column.name, column.type]));
  for (const [name, types] of Object.entries(EXPECTED_COLUMNS)) {
    const type = columns.get(name);
    if (type === undefined) problems.push(`has no column "${name}" (${types[0]})`);
    else if (!types.includes(type)) problems.push(`has "${name}" of type ${type}, not ${types.join(' or ')}`);
  }
  if (columns.has('key') && !facts.key_unique) {
    problems.push('has no primary key or unique index on "key" alone (ON CONFLICT (key) needs one)');
  }
  if (!facts.writable) {
    problems.push('is not readable and writable by this role (SELECT, INSERT, UPDATE, DELETE)');
  }
  if (facts.read_only === 'on') {
    problems.push(
      'is reached through a read-only connection (a standby, or default_transaction_read_only on): ' +
        'point the store at the primary',
    );
  }
  return problems;
}
