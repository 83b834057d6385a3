import { createHash } from 'node:crypto';
import { emptyCounters } from '../idempotency/idempotency-counters';
import { CENTER_PAGE_CSP } from './center-page.style';
import type { CenterOverview, CenterTrend } from './idempotency-center.api';
import { formatDuration, renderCenterPage } from './idempotency-center.page';

const HOSTILE = '<img src=x onerror=alert(1)>';
const NOW = Date.parse('2026-11-29T12:30:20.000Z');

function trend(): CenterTrend {
  const zeros = () => new Array<number>(60).fill(0);
  const t: CenterTrend = {
    from: new Date((Math.floor(NOW / 60_000) - 59) * 60_000).toISOString(),
    handled: zeros(),
    skipped: zeros(),
    duplicates: zeros(),
    inFlight: zeros(),
    failed: zeros(),
    invalid: zeros(),
  };
  t.handled[59] = 20;
  t.duplicates[59] = 4;
  t.inFlight[58] = 1;
  t.failed[58] = 2;
  return t;
}

function overview(): CenterOverview {
  const counters = { ...emptyCounters(), handled: 3, duplicates_completed: 1 };
  return {
    apiVersion: 1,
    generatedAt: new Date(NOW).toISOString(),
    service: `svc${HOSTILE}`,
    countersScope: 'fleet',
    activityScope: 'fleet',
    activityEnabled: true,
    hashKeys: false,
    store: {
      kind: 'RedisIdempotencyStore',
      shared: true,
      lookup: true,
      warnings: [
        { code: 'redis.maxmemory-policy', setting: `policy ${HOSTILE}`, message: `evicts ${HOSTILE}` },
      ],
      claims: { windowMinutes: 5, claims: 30, timed: 30, errors: 1, p50Ms: 0.21, p99Ms: 1.41 },
      storeErrors: 1,
      leasesLost: 0,
      completionsLost: 0,
    },
    totals: counters,
    lastHour: { handled: 20, skipped: 0, duplicates: 4, inFlight: 1, failed: 2, invalid: 0 },
    eventTypes: [
      {
        eventType: '<script>alert(1)</script>',
        covered: true,
        duplicateRate: 0.25,
        totals: counters,
        handlers: [
          {
            handler: 'H.on',
            idempotent: true,
            keySource: 'keyPath "id"',
            ttl: 86_400_000,
            inProgressTtl: 300_000,
            counters,
          },
        ],
        trend: trend(),
        recent: [
          {
            at: '2026-11-29T12:29:10.000Z',
            status: 'FAILED',
            eventType: '<script>alert(1)</script>',
            routed: true,
            key: HOSTILE,
            messageId: `m-${HOSTILE}`,
            queue: `q"${HOSTILE}`,
            receiveCount: 2,
            durationMs: 12.34,
            reason: `warehouse busy ${HOSTILE}`,
            instance: `i-${HOSTILE}`,
            traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
          },
        ],
      },
    ],
    unrouted: [{ eventType: `order_${HOSTILE}`, count: 3, lastSeenAt: '2026-11-29T12:30:00.000Z' }],
    instances: [
      {
        id: `host-${HOSTILE}/1/ab`,
        host: 'host',
        pid: 1,
        startedAt: '2026-11-29T12:00:00.000Z',
        seenAt: '2026-11-29T12:30:19.000Z',
        counters,
        claims: { windowMinutes: 5, claims: 30, timed: 30, errors: 0, p50Ms: 0.21, p99Ms: 1.41 },
        unrouted: [],
      },
    ],
  };
}

describe('renderCenterPage', () => {
  const html = renderCenterPage(overview(), {
    types: ['order_created', HOSTILE],
    type: HOSTILE,
    key: HOSTILE,
    result: {
      apiVersion: 1,
      eventType: HOSTILE,
      key: HOSTILE,
      handlers: [
        {
          handler: 'H.on',
          scope: 's',
          storeKey: `idempotency:svc:s:${HOSTILE}`,
          state: 'IN_PROGRESS',
          leaseLeftMs: 299_000,
        },
        { handler: 'H.other', scope: 't', state: 'ERROR', error: `boom ${HOSTILE}` },
      ],
      records: [],
    },
  });

  it('escapes every value a producer or the app supplies, in text and in attributes', () => {
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain(`"${HOSTILE}`);
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(html).toContain('<code>&#60;img src=x onerror=alert(1)&#62;</code>');
    expect(html).toContain('warehouse busy &#60;img src=x onerror=alert(1)&#62;');
    // In a URL: encoded, then escaped.
    expect(html).toContain(`key=${encodeURIComponent(HOSTILE)}#lookup`);
    expect(html).toContain(`value="&#60;img src=x onerror=alert(1)&#62;"`);
  });

  it('needs nothing its Content-Security-Policy forbids: no script, no style attribute, one hashed stylesheet', () => {
    // The page's own markup (the hostile values, escaped, would read as text here).
    const own = html.split('&#60;img src=x onerror=alert(1)&#62;').join('x');
    expect(own).not.toMatch(/<script|javascript:|\son[a-z]+=/i);
    expect(own).not.toMatch(/\sstyle=/i);
    expect(own).not.toMatch(/<link|<img|<iframe|\ssrc=/i);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1]);
    expect(styles).toHaveLength(1);
    const hash = createHash('sha256').update(styles[0]).digest('base64');
    expect(CENTER_PAGE_CSP).toContain(`style-src 'sha256-${hash}'`);
    expect(CENTER_PAGE_CSP).toMatch(/^default-src 'none';/);
    expect(CENTER_PAGE_CSP).not.toContain('unsafe');
  });

  it('renders counters, totals, the duplicate rate and the handler table as before', () => {
    expect(html).toContain('<td data-counter="handled">3</td>');
    expect(html).toContain('<td data-total="duplicates_completed">1</td>');
    expect(html).toContain('25.0%');
    expect(html).toContain('<td>24 h</td>');
    expect(html).toContain('counters of the whole fleet');
  });

  it('draws the last hour as a chart with one group per minute that has records', () => {
    const minutes = [
      ...html.matchAll(/<g data-minute="([^"]+)" data-handled="(\d+)"[^>]*data-failed="(\d+)"/g),
    ];
    expect(minutes.map((match) => [match[1], Number(match[2]), Number(match[3])])).toEqual([
      ['2026-11-29T12:29:00.000Z', 0, 2],
      ['2026-11-29T12:30:00.000Z', 20, 0],
    ]);
    expect(html).toContain('<title>12:30 UTC: 20 handled, 4 duplicates</title>');
  });

  it('shows the store health, the lookup answer, unrouted types and instances', () => {
    expect(html).toContain('p50 <b data-claim-p50>0.21 ms</b> · p99 <b data-claim-p99>1.41 ms</b>');
    expect(html).toContain('evicts &#60;img');
    expect(html).toContain('<span data-lease-left>4 min 59 s</span>');
    expect(html).toContain('the store failed: boom &#60;img');
    expect(html).toContain('data-unrouted-type="order_&#60;img src=x onerror=alert(1)&#62;"');
    expect(html).toContain('<span data-live-instances>1</span> live instance');
  });

  it("shows a traced record's trace id under its message id", () => {
    expect(html).toContain('<small data-trace>trace <code>4bf92f3577b34da6a3ce929d0e0e4736</code></small>');
  });
});

describe('formatDuration', () => {
  it('reads as an operator would say it', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(42_100)).toBe('42.1 s');
    expect(formatDuration(299_000)).toBe('4 min 59 s');
    expect(formatDuration(86_340_000)).toBe('23 h 59 min');
    expect(formatDuration(266_400_000)).toBe('3 d 2 h');
  });
});
