import { COUNTER_NAMES } from '../observability/idempotency-counters';
import type { IdempotencyStatsSnapshot } from '../observability/idempotency-stats.service';

/**
 * Renders the Idempotency Center as one self-contained HTML page (no scripts, no assets), so it
 * works behind any proxy and in any browser. Every value is escaped.
 */
export function renderCenterPage(snapshot: IdempotencyStatsSnapshot, refreshSeconds?: number): string {
  const head = COUNTER_NAMES.map((name) => `<th>${escapeHtml(name.replace(/_/g, ' '))}</th>`).join('');
  const sections = snapshot.eventTypes
    .map((type) => {
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
      return `
    <section data-event-type="${escapeHtml(type.eventType)}">
      <h2>${escapeHtml(type.eventType)} <small>${type.covered ? 'covered' : '<span class="warn">not covered</span>'}
        · duplicate rate <span data-duplicate-rate>${(type.duplicateRate * 100).toFixed(1)}%</span></small></h2>
      <table>
        <thead><tr><th>handler</th><th>idempotent</th><th>key</th><th>ttl</th><th>lease</th>${head}</tr></thead>
        <tbody>${rows}
        </tbody>
        <tfoot><tr><td colspan="5">total</td>${COUNTER_NAMES.map(
          (name) => `<td data-total="${name}">${type.totals[name]}</td>`,
        ).join('')}</tr></tfoot>
      </table>
    </section>`;
    })
    .join('');
  const refresh = refreshSeconds
    ? `<meta http-equiv="refresh" content="${Math.max(1, Math.floor(refreshSeconds))}">`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  ${refresh}
  <title>Idempotency Center</title>
  <style>
    body { font: 14px system-ui, sans-serif; margin: 2rem; color: #1d1d1f; }
    table { border-collapse: collapse; margin-bottom: 2rem; }
    th, td { border: 1px solid #ccc; padding: .3rem .6rem; text-align: right; }
    th:first-child, td:first-child { text-align: left; }
    thead { background: #f3f3f3; }
    .warn { color: #b00020; }
    small { font-weight: normal; color: #555; }
  </style>
</head>
<body>
  <h1>Idempotency Center</h1>
  <p>Counters of ${snapshot.scope === 'fleet' ? 'the whole fleet' : 'this instance'} · store ${escapeHtml(snapshot.store)} ·
    generated <time>${escapeHtml(snapshot.generatedAt)}</time></p>
  ${sections || '<p>No SQS handlers or idempotent handlers found.</p>'}
</body>
</html>
`;
}

function formatMs(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms === Infinity) return 'forever';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
