import { COUNTER_NAMES } from '../idempotency/idempotency-counters';
import type { InstanceHeartbeat } from '../observability/fleet-activity';
import type { RecentRecord } from '../observability/record-journal';
import { needsAttention } from '../idempotency/record-outcome';
import { CENTER_PAGE_STYLE } from './center-page.style';
import type {
  CenterEventType,
  CenterKeyLookup,
  CenterKeyState,
  CenterOverview,
} from './idempotency-center.api';
import { renderTrendChart, TREND_LEGEND } from './trend-chart.svg';

/** The key lookup part of the page: the form's choices and, once asked, the answer or why there is none. */
export interface CenterPageLookup {
  /** Event types with an `@Idempotent()` handler. */
  types: string[];
  type?: string;
  key?: string;
  result?: CenterKeyLookup;
  error?: string;
}

/** Recent failures, and duplicates and skips, shown per event type (the API gives more). */
const RECORDS_SHOWN = 10;

/** An instance that has not reported for this long is shown as stale. */
const STALE_AFTER_MS = 2 * 60_000;

/**
 * The Center as one self-contained HTML page (no script, charts as inline SVG), top to bottom: the
 * last hour, the store's health, a key lookup, each event type's trend, failures and coverage, the
 * unrouted types, the instances. Every value from a producer or the app goes through `escapeHtml`.
 * `refreshSeconds`, a whole number (the controller refuses others), reloads it that often; 0 never.
 */
export function renderCenterPage(
  overview: CenterOverview,
  lookup: CenterPageLookup = { types: [] },
  refreshSeconds?: number,
): string {
  const now = Date.parse(overview.generatedAt);
  const refresh = refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">` : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  ${refresh}
  <title>Idempotency Center</title>
  <style>${CENTER_PAGE_STYLE}</style>
</head>
<body>
  <h1>Idempotency Center</h1>
  ${renderMeta(overview, now)}
  ${overview.fleetError === undefined ? '' : `<p class="panel warn" data-fleet-error>Fleet view unavailable: ${escapeHtml(overview.fleetError)}.</p>`}
  ${renderTiles(overview)}
  <div class="cols">
    ${renderStoreHealth(overview)}
    ${renderLookup(overview, lookup, now)}
  </div>
  <h2>Event types <small>per-minute records over the last hour, recent records that were not a plain success, handlers and counters</small></h2>
  ${overview.eventTypes.map((type) => renderEventType(type, overview, now)).join('') || '<p>No SQS handlers or idempotent handlers found.</p>'}
  ${renderUnrouted(overview, now)}
  ${renderInstances(overview, now)}
</body>
</html>
`;
}

function renderMeta(overview: CenterOverview, now: number): string {
  const live = overview.instances.filter(
    (instance) => now - Date.parse(instance.seenAt) < STALE_AFTER_MS,
  ).length;
  const parts = [
    overview.service === undefined ? 'no service segment' : `service <b>${escapeHtml(overview.service)}</b>`,
    `counters of ${overview.countersScope === 'fleet' ? 'the whole fleet' : 'this instance'}`,
    overview.activityEnabled
      ? `activity of ${overview.activityScope === 'fleet' ? `the fleet (<span data-live-instances>${live}</span> live instance${live === 1 ? '' : 's'})` : 'this instance'}`
      : '<span class="warn">activity off</span> (stats.activity: false)',
    `store ${escapeHtml(overview.store.kind)}`,
    `generated <time datetime="${escapeHtml(overview.generatedAt)}">${escapeHtml(overview.generatedAt.slice(11, 19))} UTC</time>`,
  ];
  if (overview.hashKeys) parts.push('keys shown as hashes');
  return `<p class="meta">${parts.join(' · ')}</p>`;
}

function renderTiles(overview: CenterOverview): string {
  const { lastHour } = overview;
  const tile = (name: string, value: number, label: string, warn = false) =>
    `<div class="tile" data-last-hour="${name}"><b${warn && value > 0 ? ' class="warn"' : ''}>${value}</b><span>${label}</span></div>`;
  return `<div class="tiles">
    ${tile('handled', lastHour.handled, 'handled, last hour')}
    ${tile('duplicates', lastHour.duplicates + lastHour.inFlight, 'duplicates caught')}
    ${tile('skipped', lastHour.skipped, 'skipped')}
    ${tile('failed', lastHour.failed, 'failed', true)}
    ${tile('invalid', lastHour.invalid, 'invalid', true)}
    ${tile('store_errors', overview.store.storeErrors, 'store errors (all time)', true)}
  </div>`;
}

function renderStoreHealth(overview: CenterOverview): string {
  const { store } = overview;
  const claims = store.claims;
  const latency =
    claims.p50Ms === undefined
      ? `<span class="muted">no claims in the last ${claims.windowMinutes} min</span>`
      : `p50 <b data-claim-p50>${claims.p50Ms} ms</b> · p99 <b data-claim-p99>${claims.p99Ms} ms</b> · ${claims.claims} claim${claims.claims === 1 ? '' : 's'}`;
  const warnings =
    store.warnings.length === 0
      ? '<span class="muted">none</span>'
      : `<ul>${store.warnings
          .map(
            (warning) =>
              `<li class="warn" data-warning="${escapeHtml(warning.code)}"><code>${escapeHtml(warning.setting)}</code>: ${escapeHtml(warning.message)}</li>`,
          )
          .join('')}</ul>`;
  return `<div class="panel" id="store">
    <h3>Store health</h3>
    <table>
      <tr><th>store</th><td class="text"><code>${escapeHtml(store.kind)}</code> ${store.shared ? '(shared)' : '(this process only)'}</td></tr>
      <tr><th>claim latency, last ${claims.windowMinutes} min</th><td class="text">${overview.activityEnabled ? latency : '<span class="muted">activity off</span>'}</td></tr>
      <tr><th>failed claims, last ${claims.windowMinutes} min</th><td class="text${claims.errors > 0 ? ' warn' : ''}" data-claim-errors>${claims.errors}</td></tr>
      <tr><th>errors · leases lost · completions lost</th><td class="text">${store.storeErrors} · ${store.leasesLost} · ${store.completionsLost}</td></tr>
      <tr><th>key lookup</th><td class="text">${store.lookup ? 'supported' : '<span class="warn">not supported</span> (the store has no <code>inspect</code>)'}</td></tr>
      <tr><th>warnings</th><td class="text">${warnings}</td></tr>
    </table>
  </div>`;
}

function renderLookup(overview: CenterOverview, lookup: CenterPageLookup, now: number): string {
  const options = lookup.types
    .map((type) => `<option${type === lookup.type ? ' selected' : ''}>${escapeHtml(type)}</option>`)
    .join('');
  const form =
    lookup.types.length === 0
      ? '<p class="muted">No @Idempotent() handler in this app: no key is claimed here.</p>'
      : `<form method="get" action="#lookup">
      <label>event type <select name="type">${options}</select></label>
      <label>key <input type="text" name="key" value="${escapeHtml(overview.hashKeys ? '' : (lookup.key ?? ''))}" placeholder="as in the logs, e.g. evt-42" required></label>
      <button type="submit">Look up</button>
    </form>`;
  let answer = '';
  if (lookup.error !== undefined)
    answer = `<p class="warn" data-lookup-error>${escapeHtml(lookup.error)}</p>`;
  else if (lookup.result) answer = renderLookupResult(lookup.result, overview, now);
  return `<div class="panel" id="lookup">
    <h3>What happened to a key?</h3>
    ${form}
    ${answer}
  </div>`;
}

function renderLookupResult(result: CenterKeyLookup, overview: CenterOverview, now: number): string {
  const rows = result.handlers
    .map(
      (state) => `<tr data-lookup-handler="${escapeHtml(state.handler)}">
        <td class="text">${escapeHtml(state.handler)}</td>
        <td class="text"><span class="badge s-${state.state}" data-state>${state.state}</span></td>
        <td class="text">${describeState(state, overview)}</td>
        <td class="text">${state.storeKey === undefined ? '<span class="muted">hidden</span>' : `<code>${escapeHtml(state.storeKey)}</code>`}</td>
      </tr>`,
    )
    .join('');
  const records =
    result.records.length === 0
      ? '<p class="muted">No recent record (duplicate, skip, failure, invalid) carried this key.</p>'
      : renderRecordTable(result.records, overview, now, 'lookup');
  return `<div data-lookup-result>
    <p>Key <code data-lookup-key>${escapeHtml(result.key)}</code> of <b>${escapeHtml(result.eventType)}</b></p>
    <table><thead><tr><th>handler</th><th>state</th><th>meaning</th><th>store key</th></tr></thead><tbody>${rows}</tbody></table>
    ${records}
  </div>`;
}

function describeState(state: CenterKeyState, overview: CenterOverview): string {
  switch (state.state) {
    case 'COMPLETED':
      return state.expiresInMs === undefined
        ? 'handled; remembered forever (ttl Infinity): every redelivery is acked as a duplicate'
        : `handled; redeliveries are acked as duplicates for <span data-expires-in>${formatDuration(state.expiresInMs)}</span> more`;
    case 'IN_PROGRESS':
      return state.leaseLeftMs === undefined
        ? 'being handled now (a lease without expiry); redeliveries fail and come back later'
        : `being handled now; lease left <span data-lease-left>${formatDuration(state.leaseLeftMs)}</span>, after which a redelivery may claim it`;
    case 'UNKNOWN':
      return 'nothing in the store: never handled, released after a failure, or past its dedup window';
    case 'NOT_SUPPORTED':
      return `not supported: ${escapeHtml(overview.store.kind)} has no read-only <code>inspect</code>`;
    case 'ERROR':
      return `<span class="warn">the store failed: ${escapeHtml(state.error ?? 'unknown error')}</span>`;
  }
}

function renderEventType(type: CenterEventType, overview: CenterOverview, now: number): string {
  const head = COUNTER_NAMES.map((name) => `<th>${escapeHtml(name.replace(/_/g, ' '))}</th>`).join('');
  const rows = type.handlers
    .map(
      (handler) => `
        <tr data-handler="${escapeHtml(handler.handler)}">
          <td>${escapeHtml(handler.handler)}</td>
          <td>${handler.idempotent ? 'yes' : '<strong class="warn">no</strong>'}</td>
          <td>${escapeHtml(handler.keySource ?? '-')}</td>
          <td>${formatMs(handler.ttl)}</td>
          <td>${formatMs(handler.inProgressTtl)}</td>
          ${COUNTER_NAMES.map((name) => `<td data-counter="${name}">${handler.counters[name]}</td>`).join('')}
        </tr>`,
    )
    .join('');
  const coverage =
    type.handlers.length === 0
      ? '<span class="muted">no handler here</span>'
      : type.covered
        ? 'covered'
        : '<span class="warn">not covered</span>';
  const failures = type.recent.filter((record) => needsAttention(record.status)).slice(0, RECORDS_SHOWN);
  const repeats = type.recent.filter((record) => !needsAttention(record.status)).slice(0, RECORDS_SHOWN);
  return `
    <section data-event-type="${escapeHtml(type.eventType)}">
      <h2>${escapeHtml(type.eventType)} <small>${coverage}
        · duplicate rate <span data-duplicate-rate>${(type.duplicateRate * 100).toFixed(1)}%</span></small></h2>
      ${overview.activityEnabled ? `${renderTrendChart(type.trend)}${TREND_LEGEND}` : ''}
      <h3>Recent failures <small>failed and invalid records, newest first</small></h3>
      ${failures.length === 0 ? '<p class="muted" data-no-failures>None.</p>' : renderRecordTable(failures, overview, now, 'failures')}
      <h3>Recent duplicates and skips <small>newest first</small></h3>
      ${repeats.length === 0 ? '<p class="muted">None.</p>' : renderRecordTable(repeats, overview, now, 'repeats')}
      <h3>Handlers <small>counters since start</small></h3>
      <table>
        <thead><tr><th>handler</th><th>idempotent</th><th>key</th><th>ttl</th><th>lease</th>${head}</tr></thead>
        <tbody>${rows}
        </tbody>
        <tfoot><tr><td colspan="5">total</td>${COUNTER_NAMES.map(
          (name) => `<td data-total="${name}">${type.totals[name]}</td>`,
        ).join('')}</tr></tfoot>
      </table>
    </section>`;
}

/** A traced record's trace id, under its message id, for a search in the tracing backend. */
function traceOf(record: RecentRecord): string {
  return record.traceId === undefined
    ? ''
    : `<br><small data-trace>trace <code>${escapeHtml(record.traceId)}</code></small>`;
}

function renderRecordTable(
  records: readonly RecentRecord[],
  overview: CenterOverview,
  now: number,
  kind: 'failures' | 'repeats' | 'lookup',
): string {
  // The lookup's table is about one key: it leaves out the key, the queue and the instance.
  const full = kind !== 'lookup';
  const fleet = full && overview.activityScope === 'fleet';
  const rows = records
    .map((record) => {
      const key =
        record.key === undefined ? '<span class="muted">-</span>' : `<code>${escapeHtml(record.key)}</code>`;
      const linked =
        record.key !== undefined && !record.keyHashed && record.routed
          ? `<a href="?type=${escapeHtml(encodeURIComponent(record.eventType))}&amp;key=${escapeHtml(encodeURIComponent(record.key))}#lookup">${key}</a>`
          : key;
      const type = record.routed ? '' : ` <small>(type <code>${escapeHtml(record.eventType)}</code>)</small>`;
      return `<tr data-recent data-status="${record.status}">
        <td><time datetime="${escapeHtml(record.at)}" title="${escapeHtml(ago(now, record.at))}">${escapeHtml(record.at.slice(11, 19))}</time></td>
        <td class="text"><span class="badge s-${record.status}">${record.status}</span></td>
        ${full ? `<td class="key" data-key>${linked}</td>` : ''}
        <td class="${full ? 'id' : 'text'}"><code>${escapeHtml(record.messageId ?? '-')}</code>${traceOf(record)}</td>
        ${full ? `<td class="text">${escapeHtml(record.queue || '-')}</td>` : ''}
        <td>${record.receiveCount}</td>
        <td>${record.durationMs.toFixed(1)}</td>
        <td class="text reason" data-reason>${escapeHtml(record.reason ?? '')}${type}</td>
        ${fleet ? `<td class="id">${escapeHtml(record.instance ?? '-')}</td>` : ''}
      </tr>`;
    })
    .join('');
  const head = [
    'time (UTC)',
    'status',
    ...(full ? ['key'] : []),
    'message id',
    ...(full ? ['queue'] : []),
    'receives',
    'ms',
    'reason',
    ...(fleet ? ['instance'] : []),
  ];
  return `<table class="recent" data-records="${kind}"><thead><tr>${head.map((name) => `<th>${name}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>`;
}

function renderUnrouted(overview: CenterOverview, now: number): string {
  const rows = overview.unrouted
    .map(
      (type) =>
        `<tr data-unrouted-type="${escapeHtml(type.eventType)}"><td class="text"><code>${escapeHtml(type.eventType)}</code></td><td>${type.count}</td><td>${escapeHtml(ago(now, type.lastSeenAt))}</td></tr>`,
    )
    .join('');
  return `<section id="unrouted">
    <h2>Arrived with no handler <small>event types messages named that no handler routes: their records are invalid and reach the DLQ</small></h2>
    ${rows ? `<table><thead><tr><th>event type</th><th>records</th><th>last seen</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">None.</p>'}
  </section>`;
}

function renderInstances(overview: CenterOverview, now: number): string {
  const row = (instance: InstanceHeartbeat) => {
    const stale = now - Date.parse(instance.seenAt) >= STALE_AFTER_MS;
    const { counters, claims } = instance;
    return `<tr data-instance="${escapeHtml(instance.id)}"${stale ? ' class="muted"' : ''}>
      <td class="text"><code>${escapeHtml(instance.id)}</code></td>
      <td class="text">${escapeHtml(instance.service ?? '-')}</td>
      <td>${escapeHtml(ago(now, instance.seenAt))}${stale ? ' (stale)' : ''}</td>
      <td>${counters.handled}</td><td>${counters.duplicates_completed + counters.duplicates_in_flight}</td>
      <td>${counters.failed}</td><td>${counters.invalid}</td><td>${counters.store_errors}</td>
      <td>${claims.p50Ms === undefined ? '-' : `${claims.p50Ms} / ${claims.p99Ms}`}</td>
    </tr>`;
  };
  return `<section id="instances">
    <h2>Instances <small>${overview.activityScope === 'fleet' ? 'that reported within the hour' : 'this one (share a stats store to see the fleet)'}</small></h2>
    <table><thead><tr><th>instance</th><th>service</th><th>last seen</th><th>handled</th><th>duplicates</th><th>failed</th><th>invalid</th><th>store errors</th><th>claim p50 / p99 ms</th></tr></thead>
    <tbody>${overview.instances.map(row).join('')}</tbody></table>
  </section>`;
}

function formatMs(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms === Infinity) return 'forever';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

/** A duration as an operator reads it: `850 ms`, `42.1 s`, `4 min 59 s`, `23 h 59 min`, `3 d 2 h`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const s = Math.floor(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)} h ${Math.floor((s % 3_600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3_600)} h`;
}

function ago(now: number, iso: string): string {
  const ms = now - Date.parse(iso);
  return Number.isFinite(ms) ? `${formatDuration(Math.max(0, ms))} ago` : '?';
}

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return String(text).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
