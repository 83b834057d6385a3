import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { AcquireResult, IdempotencyKeyInspection } from '../idempotency-store.interface';

/**
 * The item `DynamoDbIdempotencyStore` keeps per key, and the conditions its four writes carry. Each
 * store method is exactly one conditional write, so it decides and writes atomically in one round
 * trip (no read-then-write from Node, no transaction).
 *
 * One item per key:
 *
 *   <partitionKey>  S  the idempotency key (as the module builds it: `<prefix>:<scope>:<key>`)
 *   <sortKey>       S  the fixed value of `sortKey`, when the table has one
 *   status          S  "IN_PROGRESS" or "COMPLETED"
 *   token           S  the attempt that claimed (and then completed) the key: what fencing compares
 *   expiresAtMs     N  when the lease or the dedup window ends, epoch ms: what every condition compares
 *   <ttlAttribute>  N  the same instant in epoch seconds, rounded up, for DynamoDB's TTL to delete the
 *                      item (lazily, typically within days: hence the conditions never rely on it)
 *   fingerprint     S  the payload fingerprint of a claim made with one (`tryAcquireWithFingerprint`)
 *   messageId       S  the id of the message that made that claim, when known
 *
 * `ttl: Infinity` writes neither expiry attribute: the item lives until someone deletes it.
 *
 *   absent ──claim──▶ IN_PROGRESS(token, lease) ──complete(token)──▶ COMPLETED(ttl) ──expiry──▶ "absent"
 *                         │  └──forget(token)──────────────────────────────────────────────▶ absent
 *                         └──lease expires (worker crashed)──▶ "absent": the next claim overwrites it
 *
 * An item whose `expiresAtMs` has passed counts as absent everywhere, deleted by TTL or not.
 *
 * Room to grow without a migration: an attribute added later (as the payload fingerprint was) is
 * simply missing from older items, and a missing attribute means "not recorded". Completion updates
 * only the attributes it names, so it keeps the claim's fingerprint; a new claim (a put) replaces
 * the whole item, and so drops an expired claim's fingerprint. (One case keeps a stale one: a
 * completion that finds its own lease expired and the item claimed by another attempt whose lease
 * expired too completes that item with the other attempt's fingerprint; a later copy of this
 * attempt's payload is then taken for a mismatch and fails, never a silent duplicate.)
 */

/** Attribute names the store owns in each item (the key and TTL attribute names are options). */
export const ITEM_ATTRIBUTES = {
  status: 'status',
  token: 'token',
  expiresAtMs: 'expiresAtMs',
  fingerprint: 'fingerprint',
  messageId: 'messageId',
} as const;

/** The table's side of the layout: the configured names and the sort key's fixed value. */
export interface ItemLayout {
  partitionKey: string;
  sortKey?: { name: string; value: string };
  ttlAttribute: string;
}

/** One write's expression parts, built once per store and reused by every call. */
export interface WriteExpressions {
  condition: string;
  /** `ExpressionAttributeNames`: exactly the names this write's expressions use (DynamoDB rejects others). */
  names: Record<string, string>;
  /** The update, for writes that update: with an expiry, and for `ttl: Infinity` (none). */
  update?: { expiring: string; forever: string };
}

/** The expressions of the four writes, for one layout. */
export interface ItemExpressions {
  /** Put the claim if no live item holds the key. */
  claim: WriteExpressions;
  /** Complete the caller's own claim, or a key no live item holds. */
  complete: WriteExpressions;
  /** Delete the caller's own claim; succeeds when no live item holds the key. */
  forget: WriteExpressions;
  /** Push the lease of the caller's own live claim. */
  extend: WriteExpressions;
}

/** The status values, as attribute values. */
export const STATUS = {
  inProgress: { S: AcquireResult.IN_PROGRESS },
  completed: { S: AcquireResult.COMPLETED },
} as const;

export function itemExpressions(layout: ItemLayout): ItemExpressions {
  const all: Record<string, string> = {
    '#pk': layout.partitionKey,
    '#status': ITEM_ATTRIBUTES.status,
    '#token': ITEM_ATTRIBUTES.token,
    '#exp': ITEM_ATTRIBUTES.expiresAtMs,
    '#ttl': layout.ttlAttribute,
  };
  const names = (...used: string[]) => Object.fromEntries(used.map((name) => [name, all[name]]));
  // "No live item": absent, or its lease or dedup window ended (`:now` is the caller's clock). An item
  // without `expiresAtMs` (ttl Infinity) never ends: a comparison with a missing attribute is false.
  const noLiveItem = 'attribute_not_exists(#pk) OR #exp <= :now';
  // An expired claim nobody took over is still the caller's to complete (the Redis store finds such
  // a key absent and completes it too); a live claim of another attempt, or a live completion, is not.
  const ownClaimOrNoLiveItem = `${noLiveItem} OR (#token = :token AND #status = :inProgress)`;
  return {
    claim: { condition: noLiveItem, names: names('#pk', '#exp') },
    complete: {
      condition: ownClaimOrNoLiveItem,
      names: names('#pk', '#exp', '#token', '#status', '#ttl'),
      update: {
        expiring: 'SET #status = :completed, #token = :token, #exp = :exp, #ttl = :ttl',
        forever: 'SET #status = :completed, #token = :token REMOVE #exp, #ttl',
      },
    },
    forget: { condition: ownClaimOrNoLiveItem, names: names('#pk', '#exp', '#token', '#status') },
    extend: {
      // Not resurrected once expired: the next claimer may already be running.
      condition: '#token = :token AND #status = :inProgress AND (attribute_not_exists(#exp) OR #exp > :now)',
      names: names('#token', '#status', '#exp', '#ttl'),
      update: { expiring: 'SET #exp = :exp, #ttl = :ttl', forever: 'REMOVE #exp, #ttl' },
    },
  };
}

/** The fingerprint and message id a claim kept in the item, as `tryAcquireWithFingerprint` answers them. */
export function fingerprintOfItem(item: Record<string, AttributeValue> | undefined): {
  fingerprint?: string;
  messageId?: string;
} {
  const fingerprint = item?.[ITEM_ATTRIBUTES.fingerprint]?.S;
  if (fingerprint === undefined) return {};
  const messageId = item![ITEM_ATTRIBUTES.messageId]?.S;
  return messageId === undefined ? { fingerprint } : { fingerprint, messageId };
}

/**
 * What a failed claim found, from the item that failed the condition: its status, or `undefined`
 * when it is gone or expired by `now` (it changed since the condition was checked).
 */
export function answerOfItem(
  item: Record<string, AttributeValue> | undefined,
  now: number,
): AcquireResult.COMPLETED | AcquireResult.IN_PROGRESS | undefined {
  if (item === undefined) return undefined;
  const expiresAtMs = item[ITEM_ATTRIBUTES.expiresAtMs]?.N;
  if (expiresAtMs !== undefined && Number(expiresAtMs) <= now) return undefined;
  const status = item[ITEM_ATTRIBUTES.status]?.S;
  if (status === AcquireResult.COMPLETED || status === AcquireResult.IN_PROGRESS) return status;
  throw new Error(
    `the item holds status ${JSON.stringify(status)}, neither IN_PROGRESS nor COMPLETED: ` +
      'something other than this store writes to these keys',
  );
}

/** What an item (read with a consistent `GetItem`) says of its key at `now`: for `inspect`. */
export function inspectionOfItem(
  item: Record<string, AttributeValue> | undefined,
  now: number,
): IdempotencyKeyInspection {
  const state = answerOfItem(item, now);
  if (state === undefined) return { state: 'UNKNOWN' };
  const expiresAtMs = item![ITEM_ATTRIBUTES.expiresAtMs]?.N;
  const left = expiresAtMs === undefined ? undefined : Number(expiresAtMs) - now;
  if (state === AcquireResult.COMPLETED) {
    return left === undefined ? { state: 'COMPLETED' } : { state: 'COMPLETED', expiresInMs: left };
  }
  return left === undefined ? { state: 'IN_PROGRESS' } : { state: 'IN_PROGRESS', leaseLeftMs: left };
}
