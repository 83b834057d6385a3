import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { AcquireResult, IdempotencyKeyInspection } from '../idempotency-store.interface';
import { liveKeyInspection } from '../store-helpers';

/**
 * The item kept per key, and the conditions of the store's four conditional writes (each one atomic
 * round trip). Attributes: the key (and sort key), `status`, `token` (what fencing compares),
 * `expiresAtMs` (what every condition compares), the TTL attribute in seconds (DynamoDB deletes
 * lazily, so no condition relies on it), and a claim's `fingerprint` and `messageId`.
 *
 *   absent ──claim──▶ IN_PROGRESS(token, lease) ──complete(token)──▶ COMPLETED(ttl) ──expiry──▶ "absent"
 *                         │  └──forget(token)──────────────────────────────────────────────▶ absent
 *                         └──lease expires (worker crashed)──▶ "absent": the next claim overwrites it
 *
 * An item past `expiresAtMs` counts as absent; `ttl: Infinity` writes no expiry. An attribute added
 * later is simply missing from older items, meaning "not recorded".
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

/** The status values, as attribute values. */
export const STATUS = {
  inProgress: { S: AcquireResult.IN_PROGRESS },
  completed: { S: AcquireResult.COMPLETED },
} as const;

/**
 * The expressions of the four writes for one layout, built once per store. `names` holds exactly the
 * names a write's expressions use (DynamoDB rejects others); `update` has a form with an expiry and one without.
 */
export function itemExpressions(layout: ItemLayout) {
  const all: Record<string, string> = {
    '#pk': layout.partitionKey,
    '#status': ITEM_ATTRIBUTES.status,
    '#token': ITEM_ATTRIBUTES.token,
    '#exp': ITEM_ATTRIBUTES.expiresAtMs,
    '#ttl': layout.ttlAttribute,
  };
  const write = (condition: string, update?: { expiring: string; forever: string }) => {
    const text = `${condition} ${update?.expiring} ${update?.forever}`;
    const names = Object.fromEntries(Object.entries(all).filter(([name]) => text.includes(name)));
    return { condition, names, update };
  };
  // "No live item": absent, or its lease or dedup window ended (`:now` is the caller's clock). An item
  // without `expiresAtMs` (ttl Infinity) never ends: a comparison with a missing attribute is false.
  const noLiveItem = 'attribute_not_exists(#pk) OR #exp <= :now';
  // An expired claim nobody took over is still the caller's to complete (the Redis store finds such
  // a key absent and completes it too); a live claim of another attempt, or a live completion, is not.
  const ownClaimOrNoLiveItem = `${noLiveItem} OR (#token = :token AND #status = :inProgress)`;
  return {
    claim: write(noLiveItem),
    complete: write(ownClaimOrNoLiveItem, {
      expiring: 'SET #status = :completed, #token = :token, #exp = :exp, #ttl = :ttl',
      forever: 'SET #status = :completed, #token = :token REMOVE #exp, #ttl',
    }),
    forget: write(ownClaimOrNoLiveItem),
    // Not resurrected once expired: the next claimer may already be running.
    extend: write(
      '#token = :token AND #status = :inProgress AND (attribute_not_exists(#exp) OR #exp > :now)',
      {
        expiring: 'SET #exp = :exp, #ttl = :ttl',
        forever: 'REMOVE #exp, #ttl',
      },
    ),
  };
}

export type ItemExpressions = ReturnType<typeof itemExpressions>;

/** What a failed claim found: the failing item's status, or `undefined` when it is gone or expired. */
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
  return liveKeyInspection(
    state === AcquireResult.COMPLETED,
    expiresAtMs === undefined ? undefined : Number(expiresAtMs) - now,
  );
}
