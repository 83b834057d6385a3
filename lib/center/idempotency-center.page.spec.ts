import { emptyCounters } from '../observability/idempotency-counters';
import { renderCenterPage } from './idempotency-center.page';

describe('renderCenterPage', () => {
  it('escapes every value and renders counters, totals and the duplicate rate', () => {
    const counters = { ...emptyCounters(), handled: 3, duplicates_completed: 1 };
    const html = renderCenterPage({
      scope: 'fleet',
      generatedAt: '2026-11-29T00:00:00.000Z',
      store: 'RedisIdempotencyStore',
      storeWarnings: [],
      totals: counters,
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
        },
      ],
    });
    expect(html).not.toContain('<script>');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(html).toContain('<td data-counter="handled">3</td>');
    expect(html).toContain('<td data-total="duplicates_completed">1</td>');
    expect(html).toContain('25.0%');
    expect(html).toContain('<td>24 h</td>');
    expect(html).toContain('the whole fleet');
  });
});
