import { createHash } from 'node:crypto';
import { AcquireResult } from '../idempotency-store.interface';

/**
 * What `RedisIdempotencyStore` writes, and the Lua scripts of the calls that compare before writing;
 * every call is one atomic round trip. A claim is one `SET key token NX GET PX lease` (Redis 7+;
 * `ACQUIRE` before it); completing, releasing and extending compare the token first.
 *
 *   absent ──claim──▶ "<token>" (PX lease) ──complete(token)──▶ "1" (PX ttl, or none) ──expiry──▶ absent
 *                         │  └──forget(token)─────────────────────────────────────────────────▶ absent
 *                         └──lease expires (worker crashed)──▶ absent: the next claimer wins
 *
 * "1" is a shared integer object for Redis, so a completed key costs its name and expiry. A claim
 * with a fingerprint holds `"<token> <fingerprint>[ <message id>]"`, its completion `"1 <...>"`: the
 * first word is what fencing compares. Each script touches one key (Cluster-safe); a TTL of "0" is
 * no expiry. KEYS[1] the key, ARGV[1] the token, ARGV[2] a TTL in whole milliseconds.
 */

/** A script and its SHA-1, computed once. */
export interface LuaScript {
  readonly lua: string;
  readonly sha: string;
}

function luaScript(lua: string): LuaScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** The value of a completed key. Never a valid token (the store refuses to claim with it). */
export const COMPLETED_VALUE = '1';

/** A completed value with a fingerprint starts with this. */
const COMPLETED_PREFIX = `${COMPLETED_VALUE} `;

/** A `SET ... NX GET` reply: `null` acquired, the completed marker completed, else another's live claim. */
export function acquireAnswerOf(held: string | null): AcquireResult {
  if (held === null) return AcquireResult.ACQUIRED;
  return held === COMPLETED_VALUE || held.startsWith(COMPLETED_PREFIX)
    ? AcquireResult.COMPLETED
    : AcquireResult.IN_PROGRESS;
}

/** Before Redis 7.0: `SET key value NX GET PX lease` as a script (nil when acquired, else the value held). */
export const ACQUIRE = luaScript(`
local claimed
if ARGV[2] == '0' then
  claimed = redis.call('SET', KEYS[1], ARGV[1], 'NX')
else
  claimed = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
end
if claimed then return false end
return redis.call('GET', KEYS[1])
`);

// Keys claimed without a fingerprint (the token alone) cost the scripts no more than before; otherwise
// this condition says the held value is not the caller's live claim.
const notOwnFingerprintedClaim = (token: string) =>
  `held == '${COMPLETED_VALUE}' or string.sub(held, 1, 2) == '${COMPLETED_PREFIX}' ` +
  `or string.sub(held, 1, #${token} + 1) ~= ${token} .. ' '`;
const NOT_OWN_FINGERPRINTED_CLAIM = notOwnFingerprintedClaim('ARGV[1]');

/**
 * → 1 completed · 0 lost. An absent key (expired, nobody took it) is completed too; another's claim or
 * a completed key is left alone; a fingerprint stays with its completion.
 */
export const COMPLETE = luaScript(`
local held = redis.call('GET', KEYS[1])
local value = '${COMPLETED_VALUE}'
if held and (held ~= ARGV[1] or held == '${COMPLETED_VALUE}') then
  if ${NOT_OWN_FINGERPRINTED_CLAIM} then return 0 end
  value = value .. string.sub(held, #ARGV[1] + 1)
end
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], value)
else
  redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
end
return 1
`);

/** → 1 released (or nothing to release) · 0 lost: only the caller's own claim is deleted. */
export const FORGET = luaScript(`
local held = redis.call('GET', KEYS[1])
if not held then return 1 end
if held ~= ARGV[1] or held == '${COMPLETED_VALUE}' then
  if ${NOT_OWN_FINGERPRINTED_CLAIM} then return 0 end
end
redis.call('DEL', KEYS[1])
return 1
`);

/** → 1 extended · 0 lost: only the caller's own live claim is renewed. */
export const EXTEND = luaScript(`
local held = redis.call('GET', KEYS[1])
if held ~= ARGV[1] or held == '${COMPLETED_VALUE}' then
  if not held or ${NOT_OWN_FINGERPRINTED_CLAIM} then return 0 end
end
if ARGV[2] == '0' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
`);

/** → nil when absent, else { 1 completed | 0 in progress, PTTL (-1: none) }, read in one step; read-only. */
export const INSPECT = luaScript(`
local held = redis.call('GET', KEYS[1])
if not held then return false end
local completed = 0
if held == '${COMPLETED_VALUE}' or string.sub(held, 1, 2) == '${COMPLETED_PREFIX}' then completed = 1 end
return { completed, redis.call('PTTL', KEYS[1]) }
`);

/**
 * The batch scripts: the single-key decisions for every key of a call, in one atomic script (once per
 * hash slot on a cluster). KEYS[i] the i-th key, ARGV[2i - 1] its value or token, ARGV[2i] its TTL.
 * Both read every key with one `MGET` first (`bench/PROFILE.md`: "... one `MGET` per batch script ...").
 */

/** What `ACQUIRE_MANY` answers for a key, by index: 0 acquired, 1 completed, 2 in progress. */
export const ACQUIRE_MANY_ANSWERS = [
  AcquireResult.ACQUIRED,
  AcquireResult.COMPLETED,
  AcquireResult.IN_PROGRESS,
] as const;

/** Every key's value at the start of a batch script (`false` where absent), in one command. */
const READ_ALL = `local values = redis.call('MGET', unpack(KEYS))`;

/**
 * → { 0 acquired | 1 completed | 2 in progress, per key }. A key `MGET` found absent is claimed with
 * `SET NX`, which every server takes; only a key an earlier entry of this call claimed is refused, and
 * read again (one loop for every version: `SET NX GET`, Redis 7+, would save that `GET` alone).
 */
export const ACQUIRE_MANY = luaScript(`
local answers = {}
${READ_ALL}
for i = 1, #KEYS do
  local held = values[i]
  if not held then
    local claimed
    if ARGV[2 * i] == '0' then
      claimed = redis.call('SET', KEYS[i], ARGV[2 * i - 1], 'NX')
    else
      claimed = redis.call('SET', KEYS[i], ARGV[2 * i - 1], 'NX', 'PX', ARGV[2 * i])
    end
    if not claimed then held = redis.call('GET', KEYS[i]) end
  end
  if not held then
    answers[i] = 0
  elseif held == '${COMPLETED_VALUE}' or string.sub(held, 1, 2) == '${COMPLETED_PREFIX}' then
    answers[i] = 1
  else
    answers[i] = 2
  end
end
return answers
`);

/** → { 1 completed | 0 lost, per key }: `COMPLETE` for each key. */
export const COMPLETE_MANY = luaScript(`
local answers = {}
${READ_ALL}
local written = {}
for i = 1, #KEYS do
  local key, token, px = KEYS[i], ARGV[2 * i - 1], ARGV[2 * i]
  local held = values[i]
  -- Read again where MGET cannot be trusted: after this call's own write of the key, and where it
  -- found nothing (MGET answers nil for a key of another type too, which SET would overwrite; GET
  -- refuses it with WRONGTYPE, as COMPLETE does). A live claim is the usual case: no GET.
  if not held or written[key] then held = redis.call('GET', key) end
  local value = '${COMPLETED_VALUE}'
  local lost = false
  if held and (held ~= token or held == '${COMPLETED_VALUE}') then
    if ${notOwnFingerprintedClaim('token')} then
      lost = true
    else
      value = value .. string.sub(held, #token + 1)
    end
  end
  if lost then
    answers[i] = 0
  else
    if px == '0' then
      redis.call('SET', key, value)
    else
      redis.call('SET', key, value, 'PX', px)
    end
    written[key] = true
    answers[i] = 1
  end
end
return answers
`);
