import type { IdempotencyStoreWarning } from '../idempotency-store.interface';

/**
 * The check of the Redis behind a store for settings under which it forgets completed keys early, so
 * duplicates run again silently: an evicting `maxmemory-policy` (`volatile-*` evicts the store's keys
 * too) and no persistence. Read from `INFO` (managed Redis disables `CONFIG`), on every master.
 */

/** What the check calls: an ioredis `Redis` or `Cluster` has all of it. */
export interface RedisInfoClient {
  info?(section: string): Promise<string>;
  config?(subcommand: 'GET', parameter: string): Promise<unknown>;
  /** ioredis `Cluster`: the master nodes, each checked on its own. */
  nodes?(role: 'master'): RedisInfoClient[];
}

/** The settings of one server that matter to dedup, as read from it. */
interface RedisServerSettings {
  maxmemory: number;
  maxmemoryPolicy: string;
  aofEnabled: boolean;
  /** The RDB schedule (`CONFIG GET save`): `''` for none, `undefined` when `CONFIG` is refused. */
  rdbSchedule: string | undefined;
  /** Whether any RDB snapshot was written since the server started (`INFO persistence`). */
  rdbSnapshotTaken: boolean;
}

/**
 * Reads the settings of every server behind `client` (each master of a cluster): those under which
 * completed keys can be forgotten early, and what each means; empty when safe.
 */
export async function readRedisRisks(client: RedisInfoClient): Promise<IdempotencyStoreWarning[]> {
  const servers = typeof client.nodes === 'function' ? client.nodes('master') : [client];
  const warnings = new Map<string, IdempotencyStoreWarning>();
  for (const server of await Promise.all(servers.map(readOne))) {
    for (const warning of [evictionRisk(server), persistenceRisk(server)]) {
      if (warning) warnings.set(`${warning.code} ${warning.setting}`, warning);
    }
  }
  return [...warnings.values()];
}

async function readOne(client: RedisInfoClient): Promise<RedisServerSettings> {
  if (typeof client.info !== 'function') {
    throw new Error('the Redis client has no info() command to read the server settings with');
  }
  const [memory, persistence] = await Promise.all([client.info('memory'), client.info('persistence')]);
  const fields = parseInfo(`${memory}\n${persistence}`);
  const aofEnabled = fields.get('aof_enabled') === '1';
  return {
    maxmemory: Number(fields.get('maxmemory') ?? 0),
    maxmemoryPolicy: fields.get('maxmemory_policy') ?? 'noeviction',
    aofEnabled,
    rdbSchedule: aofEnabled ? undefined : await rdbScheduleOf(client),
    rdbSnapshotTaken:
      Number(fields.get('rdb_saves') ?? 0) > 0 || Number(fields.get('rdb_last_bgsave_time_sec') ?? -1) >= 0,
  };
}

/** `CONFIG GET save`, or `undefined` where the server refuses `CONFIG` (managed Redis). */
async function rdbScheduleOf(client: RedisInfoClient): Promise<string | undefined> {
  if (typeof client.config !== 'function') return undefined;
  try {
    const reply = await client.config('GET', 'save');
    return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
  } catch {
    return undefined;
  }
}

/** `field:value` lines of an `INFO` reply. */
function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

function evictionRisk(server: RedisServerSettings): IdempotencyStoreWarning | undefined {
  if (server.maxmemoryPolicy === 'noeviction' || server.maxmemory <= 0) return undefined;
  return {
    code: 'redis.maxmemory-policy',
    setting: `maxmemory-policy ${server.maxmemoryPolicy} (maxmemory ${server.maxmemory} bytes)`,
    message:
      `maxmemory-policy ${server.maxmemoryPolicy} evicts keys when Redis reaches maxmemory: a completed key it ` +
      'evicts is forgotten before its ttl, and a duplicate of that event runs its handler again' +
      (server.maxmemoryPolicy.startsWith('volatile-')
        ? ' (every key the store writes has an expiry, so volatile-* evicts them as readily as allkeys-*)'
        : '') +
      '. Set maxmemory-policy noeviction: a full Redis then refuses claims, and records fail closed and are ' +
      'redelivered instead of running twice; size maxmemory for one ttl of keys.',
  };
}

function persistenceRisk(server: RedisServerSettings): IdempotencyStoreWarning | undefined {
  if (server.aofEnabled) return undefined;
  const snapshots = (setting: string, how: string): IdempotencyStoreWarning => ({
    code: 'redis.persistence',
    setting,
    message:
      `Redis persists by RDB snapshots ${how}: a restart forgets the keys completed since the last snapshot, ` +
      'and their duplicates run their handlers again. Turn on AOF (appendonly yes, appendfsync everysec) to ' +
      'narrow that to about a second of writes.',
  });
  if (server.rdbSchedule) return snapshots(`appendonly no, save "${server.rdbSchedule}"`, 'only');
  if (server.rdbSchedule === undefined && server.rdbSnapshotTaken) {
    return snapshots('appendonly no (RDB snapshots taken)', 'at most');
  }
  return {
    code: 'redis.persistence',
    setting:
      server.rdbSchedule === '' ? 'appendonly no, save ""' : 'appendonly no, no RDB snapshot since start-up',
    message:
      'Redis keeps no data over a restart: a restart (or a failover to a node without the data) forgets every ' +
      'completed key, and every duplicate within the ttl runs its handler again. Turn on AOF (appendonly yes, ' +
      'appendfsync everysec), or on a managed service use replication with automatic failover.',
  };
}

/** The one warning line naming every risky setting; `where` is `Redis at <address>`. */
export function describeRedisRisks(where: string, warnings: readonly IdempotencyStoreWarning[]): string {
  const items = warnings.map((warning, index) => `(${index + 1}) ${warning.setting}: ${warning.message}`);
  return (
    `${where} may forget completed keys before their ttl, and duplicates of those events would run ` +
    `again: ${items.join(' ')} See "Operating the store" in docs/stores/redis.md.`
  );
}
