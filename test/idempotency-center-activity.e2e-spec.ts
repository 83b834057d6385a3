import { Controller } from '@nestjs/common';
import { ClientProxyFactory, EventPattern, Payload, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { lastValueFrom } from 'rxjs';
import { AcquireResult } from '../lib/stores';
import {
  CenterKeyLookup,
  CenterOverview,
  CenterRecords,
  IdempotencyStats,
  InMemoryIdempotencyStatsStore,
} from '../lib/center';
import { Idempotent, IdempotencyModule, IdempotencyStore, InMemoryIdempotencyStore } from '../lib';
import { RedisIdempotencyStatsStore } from '../lib/stores/redis';
import { CLAIMS_INDEX } from '../lib/observability/claim-latency';
import { deferred, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { CenterApp, serveCenterApp } from './support/center-app';
import { requires } from './support/prerequisites';
import { waitFor } from './support/wait-for';

const withRedis = requires('redis-server');

const HOSTILE = '<img src=x onerror=alert(1)>';

interface Served extends CenterApp {
  get<T = unknown>(path: string, admin?: boolean): Promise<{ status: number; body: T; headers: Headers }>;
}

/** The Center's app, with a `get` that sends the admin header (unless told not to) and parses JSON. */
async function serve(options: Parameters<typeof serveCenterApp>[0] = {}): Promise<Served> {
  const served = await serveCenterApp(options);
  return {
    ...served,
    async get<T>(path: string, admin = true) {
      const response = await fetch(`${served.base}${path}`, { headers: admin ? { 'x-admin': 'yes' } : {} });
      const text = await response.text();
      let body: unknown = text;
      if (response.headers.get('content-type')?.includes('json')) body = JSON.parse(text);
      return { status: response.status, body: body as T, headers: response.headers };
    },
  };
}

const lookupOf = (served: Served, eventType: string, key: string) =>
  served.get<CenterKeyLookup>(
    `/idempotency/api/v1/lookup?eventType=${encodeURIComponent(eventType)}&key=${encodeURIComponent(key)}`,
  );

describe('the Idempotency Center: key lookup', () => {
  let served: Served;
  let store: InMemoryIdempotencyStore;
  beforeEach(async () => {
    store = new InMemoryIdempotencyStore();
    served = await serve({ idempotency: { store } });
  });
  afterEach(() => served.close());

  it('answers what happened to a key: completed, in flight with the lease left, unknown; and never writes', async () => {
    await served.sqs.send(orderCreated('e1'));
    const gate = deferred();
    served.ledger.script.set('order-e2', gate.promise);
    const inFlight = served.sqs.send(orderCreated('e2'));
    await waitFor(() => served.ledger.calls === 2, 30_000, 'the second handler call');

    const completed = await lookupOf(served, 'order_created', 'e1');
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({
      apiVersion: 1,
      eventType: 'order_created',
      key: 'e1',
      handlers: [
        {
          handler: 'OrdersHandler.onOrderCreated',
          scope: 'order_created',
          storeKey: 'idempotency:order_created:e1',
          state: 'COMPLETED',
        },
      ],
    });
    const expiresInMs = completed.body.handlers[0].expiresInMs!;
    expect(expiresInMs).toBeGreaterThan(86_400_000 - 60_000);
    expect(expiresInMs).toBeLessThanOrEqual(86_400_000 + 1);

    const claimed = await lookupOf(served, 'order_created', 'e2');
    expect(claimed.body.handlers[0]).toMatchObject({ state: 'IN_PROGRESS' });
    // The lease is capped by the time the (Lambda-like) test host has left: 30 s.
    expect(claimed.body.handlers[0].leaseLeftMs).toBeGreaterThan(20_000);
    expect(claimed.body.handlers[0].leaseLeftMs).toBeLessThanOrEqual(30_000 + 1);

    const sizeBefore = store.size;
    const unknown = await lookupOf(served, 'order_created', 'never-sent');
    expect(unknown.body.handlers[0]).toMatchObject({ state: 'UNKNOWN' });
    // The lookup wrote nothing: the key is still free, the in-flight claim keeps its lease.
    expect(store.size).toBe(sizeBefore);
    expect(await store.tryAcquire('idempotency:order_created:never-sent', 1_000, 't')).toBe(
      AcquireResult.ACQUIRED,
    );
    const again = await lookupOf(served, 'order_created', 'e2');
    expect(again.body.handlers[0].leaseLeftMs).toBeLessThanOrEqual(claimed.body.handlers[0].leaseLeftMs!);

    gate.resolve();
    await inFlight;
    expect((await lookupOf(served, 'order_created', 'e2')).body.handlers[0].state).toBe('COMPLETED');
  });

  it('lists the recent records that carried the key, and shows the answer on the page', async () => {
    await served.sqs.send(orderCreated('e7'));
    await served.sqs.send(orderCreated('e7'));
    const lookup = await lookupOf(served, 'order_created', 'e7');
    expect(lookup.body.records).toEqual([
      expect.objectContaining({
        status: 'DUPLICATE',
        key: 'e7',
        eventType: 'order_created',
        queue: 'test-queue',
      }),
    ]);
    const page = await served.get<string>('/idempotency/ui?type=order_created&key=e7');
    expect(page.body).toContain('<span class="badge s-COMPLETED" data-state>COMPLETED</span>');
    expect(page.body).toContain('<code data-lookup-key>e7</code>');
  });

  it('turns a key typed as it came in the payload into the key the claim used', async () => {
    const long = 'x'.repeat(300); // claimed as its sha256: digest, which the logs show
    await served.sqs.send(orderCreated(long));
    const lookup = await lookupOf(served, 'order_created', long);
    expect(lookup.body.handlers[0].state).toBe('COMPLETED');
    // In the store key the digest's ':' is escaped like any ':' of a key.
    expect(lookup.body.handlers[0].storeKey).toMatch(/^idempotency:order_created:sha256%3A[0-9a-f]{64}$/);
    const logged = `sha256:${lookup.body.handlers[0].storeKey!.slice(-64)}`;
    expect((await lookupOf(served, 'order_created', logged)).body.handlers[0].state).toBe('COMPLETED');
  });

  it('finds a payload id that itself reads like a stored key (sha256:...), by that id and by its stored key', async () => {
    const digestLike = `sha256:${'ab'.repeat(32)}`; // a producer's id of the form the claim gives hashed keys
    for (const id of [digestLike, 'sha256:order-9', 'SHA256:upper', `${digestLike}\n`]) {
      await served.sqs.send(orderCreated(id));
      await served.sqs.send(orderCreated(id)); // a duplicate, journaled with its key
      const byId = await lookupOf(served, 'order_created', id);
      expect(byId.body.handlers[0].state).toBe('COMPLETED');
      expect(byId.body.records).toEqual([expect.objectContaining({ status: 'DUPLICATE' })]);
      // The store key the lookup answered with is the claim's: typed as the stored key, it is found too.
      const stored = decodeURIComponent(
        byId.body.handlers[0].storeKey!.slice('idempotency:order_created:'.length),
      );
      const byStoredKey = await lookupOf(served, 'order_created', stored);
      expect(byStoredKey.body.handlers[0]).toMatchObject({
        state: 'COMPLETED',
        storeKey: byId.body.handlers[0].storeKey,
      });
      expect(byStoredKey.body.records).toEqual(byId.body.records);
      const records = await served.get<CenterRecords>(
        `/idempotency/api/v1/records?key=${encodeURIComponent(id)}`,
      );
      expect(records.body.records).toEqual(byId.body.records);
    }
    // A stored key of the digest form that no payload id was is still looked up as the stored key.
    expect(
      (await lookupOf(served, 'order_created', `sha256:${'cd'.repeat(32)}`)).body.handlers[0].state,
    ).toBe('UNKNOWN');
  });

  it('says why it cannot answer: no event type, no key, a type without @Idempotent()', async () => {
    const missing = await served.get<{ message: string }>(
      '/idempotency/api/v1/lookup?eventType=order_created',
    );
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('Give the key to look up');
    const notIdempotent = await lookupOf(served, 'order_cancelled', 'c1');
    expect(notIdempotent.status).toBe(404);
    expect((notIdempotent.body as unknown as { message: string }).message).toBe(
      'No @Idempotent() handler of event type "order_cancelled" in this app, so no key of it is claimed here ' +
        '(idempotent types: "order_created").',
    );
    const twice = await served.get('/idempotency/api/v1/lookup?eventType=order_created&key=a&key=b');
    expect(twice.status).toBe(400);
    const page = await served.get<string>('/idempotency/ui?type=order_cancelled&key=c1');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<p class="warn" data-lookup-error>No @Idempotent() handler of event type');
  });
});

describe('the Idempotency Center: stores without a lookup, or failing it', () => {
  /** Delegates the three required methods only: a store written before `inspect` existed. */
  class PlainStore implements IdempotencyStore {
    readonly shared = false;
    private readonly inner = new InMemoryIdempotencyStore();
    tryAcquire(key: string, ttlMs: number, token: string) {
      return this.inner.tryAcquire(key, ttlMs, token);
    }
    markComplete(key: string, ttlMs: number, token: string) {
      return this.inner.markComplete(key, ttlMs, token);
    }
    forget(key: string, token: string) {
      return this.inner.forget(key, token);
    }
  }

  it('says "not supported" for a store without inspect', async () => {
    const served = await serve({ idempotency: { store: new PlainStore() } });
    try {
      await served.sqs.send(orderCreated('p1'));
      const lookup = await lookupOf(served, 'order_created', 'p1');
      expect(lookup.body.handlers[0]).toMatchObject({ state: 'NOT_SUPPORTED' });
      const page = await served.get<string>('/idempotency/ui?type=order_created&key=p1');
      expect(page.body).toContain('not supported: PlainStore has no read-only <code>inspect</code>');
      const overview = await served.get<CenterOverview>('/idempotency/api/v1/overview');
      expect(overview.body.store).toMatchObject({ kind: 'PlainStore', lookup: false });
    } finally {
      await served.close();
    }
  });

  it('shows a store failing the lookup, or answering off-protocol, or not at all, as an error', async () => {
    const answers: Array<() => Promise<unknown>> = [
      () => Promise.reject(new Error('connection reset')),
      () => Promise.resolve({ state: 'MAYBE' }),
      () => new Promise(() => undefined), // never answers
    ];
    let next = 0;
    const store = Object.assign(new PlainStore(), {
      inspect: () => answers[next++]() as ReturnType<NonNullable<IdempotencyStore['inspect']>>,
    });
    const served = await serve({ idempotency: { store }, center: { lookupTimeoutMs: 100 } });
    try {
      const errors = [];
      for (let i = 0; i < answers.length; i++)
        errors.push((await lookupOf(served, 'order_created', 'k')).body.handlers[0]);
      expect(errors).toEqual([
        expect.objectContaining({ state: 'ERROR', error: 'connection reset' }),
        expect.objectContaining({
          state: 'ERROR',
          error: expect.stringContaining('inspect resolved to the object {"state":"MAYBE"}'),
        }),
        expect.objectContaining({ state: 'ERROR', error: 'the store did not answer within 100 ms' }),
      ]);
    } finally {
      await served.close();
    }
  });
});

describe('the Idempotency Center: recent records, trends, coverage', () => {
  it('shows the recent failures with their reasons, the minute trends and the types no handler routes', async () => {
    const served = await serve();
    try {
      const { sqs, ledger } = served;
      await sqs.send(orderCreated('r1'));
      await sqs.send(orderCreated('r1')); // duplicate
      ledger.script.set('order-r2', 'fail');
      await sqs.send(orderCreated('r2')); // failed
      ledger.script.set('order-r3', 'skip');
      await sqs.send(orderCreated('r3')); // skipped
      await sqs.send({ type: 'order_shipped', id: 's1' }); // no handler routes it
      await sqs.send({ type: 'order_shipped', id: 's2' });
      await sqs.send('{"type":'); // not JSON

      const { body } = await served.get<CenterOverview>('/idempotency/api/v1/overview');
      expect(body).toMatchObject({
        apiVersion: 1,
        countersScope: 'instance',
        activityScope: 'instance',
        activityEnabled: true,
        lastHour: { handled: 1, duplicates: 1, skipped: 1, failed: 1, invalid: 3 },
      });
      const created = body.eventTypes.find((type) => type.eventType === 'order_created')!;
      expect(created.recent.map((record) => [record.status, record.key, record.reason])).toEqual([
        ['SKIPPED', 'r3', 'already shipped'],
        ['FAILED', 'r2', 'shipping order-r2 failed'],
        ['DUPLICATE', 'r1', undefined],
      ]);
      // This minute (the last of the 60) holds the run, or the one before if the minute turned.
      const lastTwo = (series: number[]) => series[58] + series[59];
      expect(lastTwo(created.trend.handled)).toBe(1);
      expect(lastTwo(created.trend.failed)).toBe(1);
      expect(Date.parse(created.trend.from)).toBe(
        (Math.floor(Date.parse(body.generatedAt) / 60_000) - 59) * 60_000,
      );
      expect(body.unrouted).toEqual([expect.objectContaining({ eventType: 'order_shipped', count: 2 })]);
      const unknown = body.eventTypes.find((type) => type.eventType === '(unknown)')!;
      expect(unknown.recent.map((record) => [record.eventType, record.routed])).toEqual([
        ['(unknown)', false],
        ['order_shipped', false],
        ['order_shipped', false],
      ]);
      // Coverage: the handler without @Idempotent() is flagged.
      const cancelled = body.eventTypes.find((type) => type.eventType === 'order_cancelled')!;
      expect(cancelled).toMatchObject({ covered: false, handlers: [{ idempotent: false }] });

      const failures = await served.get<CenterRecords>('/idempotency/api/v1/records?status=FAILED');
      expect(failures.body.records).toEqual([
        expect.objectContaining({ key: 'r2', reason: 'shipping order-r2 failed' }),
      ]);
      const bad = await served.get('/idempotency/api/v1/records?limit=0');
      expect(bad.status).toBe(400);

      const page = (await served.get<string>('/idempotency/ui')).body;
      expect(page).toMatch(/data-records="failures"[\s\S]*?shipping order-r2 failed/);
      expect(page).toContain('<tr data-unrouted-type="order_shipped">');
      expect(page).toMatch(/<g data-minute="[^"]+" data-handled="1"/);
    } finally {
      await served.close();
    }
  });

  it('measures the store’s claim latency and counts failed claims', async () => {
    let failing = false;
    const inner = new InMemoryIdempotencyStore();
    const store: IdempotencyStore = {
      shared: false,
      tryAcquire: (key, ttl, token) =>
        failing ? Promise.reject<AcquireResult>(new Error('down')) : inner.tryAcquire(key, ttl, token),
      markComplete: (key, ttl, token) => inner.markComplete(key, ttl, token),
      forget: (key, token) => inner.forget(key, token),
    };
    const served = await serve({ idempotency: { store } });
    try {
      const began = performance.now();
      for (let i = 0; i < 5; i++) await served.sqs.send(orderCreated(`l${i}`));
      const took = performance.now() - began;
      failing = true;
      await served.sqs.send(orderCreated('l9'));
      const { body } = await served.get<CenterOverview>('/idempotency/api/v1/overview');
      expect(body.store.claims).toMatchObject({ windowMinutes: 5, claims: 5, errors: 1 });
      expect(body.store.claims.p50Ms).toBeGreaterThan(0);
      expect(body.store.claims.p99Ms).toBeGreaterThanOrEqual(body.store.claims.p50Ms!);
      // Each claim is timed from its start to the store's answer: none took longer than the five sends.
      expect(body.store.claims.p99Ms).toBeLessThanOrEqual(took);
      expect(body.store.storeErrors).toBe(1);
      expect(body.instances).toHaveLength(1);
      expect(body.instances[0]).toMatchObject({ pid: process.pid, counters: { handled: 5, failed: 1 } });
    } finally {
      await served.close();
    }
  });

  it('answers records for a limit of 1 to 1,000 and refuses any other with a 400 naming it', async () => {
    const served = await serve();
    try {
      for (let i = 0; i < 3; i++) {
        served.ledger.script.set(`order-n${i}`, 'fail');
        await served.sqs.send(orderCreated(`n${i}`));
      }
      for (const [limit, shown] of [
        ['1', 1],
        ['1000', 3],
      ] as const) {
        const answer = await served.get<CenterRecords>(`/idempotency/api/v1/records?limit=${limit}`);
        expect([answer.status, answer.body.records.length]).toEqual([200, shown]);
      }
      for (const limit of ['1001', '5000', '0', '-1', '1.5', 'ten', '']) {
        const refused = await served.get<{ message: string }>(`/idempotency/api/v1/records?limit=${limit}`);
        expect([limit, refused.status]).toEqual([limit, 400]);
        expect(refused.body.message).toBe(
          `limit must be an integer from 1 to 1,000 (leave it out for 100), got ${JSON.stringify(limit)}.`,
        );
      }
    } finally {
      await served.close();
    }
  });

  it('reloads the page every refresh seconds, never for 0, and refuses any other refresh with a 400', async () => {
    const served = await serve();
    try {
      const reload = /<meta http-equiv="refresh" content="([^"]*)">/;
      for (const [query, seconds] of [
        ['', undefined],
        ['?refresh=5', '5'],
        ['?refresh=1', '1'],
        ['?refresh=0', undefined],
      ] as const) {
        const page = await served.get<string>(`/idempotency/ui${query}`);
        expect([query, page.status, reload.exec(page.body)?.[1]]).toEqual([query, 200, seconds]);
      }
      for (const refresh of ['-5', '-1', '2.5', 'soon', 'Infinity', '1e400']) {
        const refused = await served.get<{ message: string }>(`/idempotency/ui?refresh=${refresh}`);
        expect([refresh, refused.status, refused.headers.get('content-type')]).toEqual([
          refresh,
          400,
          expect.stringContaining('application/json'),
        ]);
        expect(refused.body.message).toBe(
          `refresh must be a whole number of seconds between reloads (0 or left out: none), got ${JSON.stringify(refresh)}.`,
        );
      }
      const twice = await served.get<{ message: string }>('/idempotency/ui?refresh=5&refresh=10');
      expect([twice.status, twice.body.message]).toEqual([400, 'refresh must be given once, as text.']);
    } finally {
      await served.close();
    }
  });

  it('records nothing with stats: { activity: false }', async () => {
    const served = await serve({ idempotency: { stats: { activity: false } } });
    try {
      await served.sqs.send(orderCreated('o1'));
      await served.sqs.send(orderCreated('o1'));
      const activity = await served.app.get(IdempotencyStats).activity();
      expect(activity).toMatchObject({ enabled: false, records: [], trends: [] });
      const { body } = await served.get<CenterOverview>('/idempotency/api/v1/overview');
      expect(body.activityEnabled).toBe(false);
      expect(body.lastHour.handled).toBe(0);
      expect(
        body.eventTypes.find((type) => type.eventType === 'order_created')!.totals.duplicates_completed,
      ).toBe(1);
      expect((await served.get<string>('/idempotency/ui')).body).toContain('activity off');
    } finally {
      await served.close();
    }
  });
});

describe('the Idempotency Center: safety', () => {
  it('guards every route, and serves the page with a strict Content-Security-Policy', async () => {
    const served = await serve();
    try {
      for (const path of [
        '',
        '/ui',
        '/api/v1/overview',
        '/api/v1/counters',
        '/api/v1/records',
        '/api/v1/lookup?eventType=order_created&key=k',
      ]) {
        expect({ path, status: (await served.get(`/idempotency${path}`, false)).status }).toEqual({
          path,
          status: 403,
        });
      }
      const page = await served.get<string>('/idempotency/ui');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toMatch(
        /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/,
      );
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      // The 0.1 endpoint answers as before, and as api/v1/counters.
      const old = await served.get<{ totals: unknown }>('/idempotency');
      const v1 = await served.get<{ totals: unknown }>('/idempotency/api/v1/counters');
      expect(v1.body.totals).toEqual(old.body.totals);
    } finally {
      await served.close();
    }
  });

  it('escapes a hostile key, and hides keys as hashes with hashKeys (a lookup still finds them)', async () => {
    const plain = await serve();
    try {
      await plain.sqs.send(orderCreated(HOSTILE));
      await plain.sqs.send(orderCreated(HOSTILE));
      const page = (
        await plain.get<string>(`/idempotency/ui?type=order_created&key=${encodeURIComponent(HOSTILE)}`)
      ).body;
      expect(page).not.toContain(HOSTILE);
      expect(page).toContain('<code>&#60;img src=x onerror=alert(1)&#62;</code>');
    } finally {
      await plain.close();
    }

    const hashed = await serve({ center: { hashKeys: true } });
    try {
      await hashed.sqs.send(orderCreated('alice@example.com'));
      await hashed.sqs.send(orderCreated('alice@example.com'));
      const overview = await hashed.get<string>('/idempotency/api/v1/overview');
      const page = await hashed.get<string>('/idempotency/ui?type=order_created&key=alice%40example.com');
      const lookup = await lookupOf(hashed, 'order_created', 'alice@example.com');
      for (const text of [JSON.stringify(overview.body), page.body, JSON.stringify(lookup.body)]) {
        expect(text).not.toContain('alice');
        expect(text).toMatch(/h:[0-9a-f]{16}/);
      }
      expect(lookup.body.handlers[0]).toEqual({
        handler: 'OrdersHandler.onOrderCreated',
        scope: 'order_created',
        state: 'COMPLETED',
        expiresInMs: expect.any(Number),
      });
      expect(lookup.body.records).toEqual([
        expect.objectContaining({ status: 'DUPLICATE', keyHashed: true }),
      ]);
    } finally {
      await hashed.close();
    }
  });

  it('keeps a hash, not the key, in the journal when the record log hashes keys', async () => {
    const served = await serve({ sqs: { recordLog: { hashKeys: true } } });
    try {
      await served.sqs.send(orderCreated('bob@example.com'));
      await served.sqs.send(orderCreated('bob@example.com'));
      const activity = await served.app.get(IdempotencyStats).activity();
      expect(JSON.stringify(activity)).not.toContain('bob@example.com');
      expect(activity.records).toEqual([expect.objectContaining({ keyHashed: true })]);
      const lookup = await lookupOf(served, 'order_created', 'bob@example.com');
      expect(lookup.body.records).toHaveLength(1);
    } finally {
      await served.close();
    }
  });
});

describe('the Idempotency Center of a fleet', () => {
  it('shows every instance’s records, trends and heartbeats through a shared stats store (in memory)', async () => {
    const shared = new InMemoryIdempotencyStatsStore();
    const store = new InMemoryIdempotencyStore();
    const stats = { store: shared, flushIntervalMs: 60_000 };
    const [worker, center] = await Promise.all([
      serve({ idempotency: { store, service: 'orders', stats } }),
      serve({ idempotency: { store, service: 'orders', stats } }),
    ]);
    try {
      worker.ledger.script.set('order-f1', 'fail');
      await worker.sqs.send(orderCreated('f1'));
      await worker.sqs.send(orderCreated('f2'));
      await worker.app.get(IdempotencyStats).flush();
      const { body } = await center.get<CenterOverview>('/idempotency/api/v1/overview');
      expect(body.activityScope).toBe('fleet');
      expect(body.lastHour).toMatchObject({ handled: 1, failed: 1 });
      expect(body.instances).toHaveLength(2);
      const workerId = body.instances.find((instance) => instance.counters.handled === 1)!.id;
      expect(body.eventTypes.find((type) => type.eventType === 'order_created')!.recent).toEqual([
        expect.objectContaining({ status: 'FAILED', key: 'f1', instance: workerId }),
      ]);
    } finally {
      await Promise.all([worker.close(), center.close()]);
    }
  });

  it('shows this instance, and says why, when the shared stats store cannot be read', async () => {
    const down = new Error('connect ECONNREFUSED 10.0.0.7:6379');
    const statsStore = {
      add: async () => undefined,
      read: () => Promise.reject(down),
      report: async () => undefined,
      readActivity: () => Promise.reject(down),
    };
    const served = await serve({ idempotency: { stats: { store: statsStore, flushIntervalMs: 60_000 } } });
    try {
      served.ledger.script.set('order-d1', 'fail');
      await served.sqs.send(orderCreated('d1'));
      const { status, body } = await served.get<CenterOverview>('/idempotency/api/v1/overview');
      expect(status).toBe(200);
      expect(body).toMatchObject({
        countersScope: 'instance',
        activityScope: 'instance',
        fleetError:
          'the shared stats store could not be read (connect ECONNREFUSED 10.0.0.7:6379): this shows this instance only',
        lastHour: { failed: 1 },
      });
      const page = await served.get<string>('/idempotency/ui');
      expect(page.body).toContain(
        '<p class="panel warn" data-fleet-error>Fleet view unavailable: the shared stats store',
      );
      const records = await served.get<CenterRecords>('/idempotency/api/v1/records');
      expect(records.body).toMatchObject({
        scope: 'instance',
        fleetError: expect.any(String),
        records: [{ key: 'd1' }],
      });
    } finally {
      await served.close();
    }
  });

  withRedis.it('does the same through Redis, in one slot, bounded', async () => {
    const redis = new Redis(process.env.REDIS_URL!);
    const key = `center-fleet:${Date.now()}:${Math.random()}`;
    const store = new InMemoryIdempotencyStore();
    const stats = () => ({
      store: new RedisIdempotencyStatsStore(redis, key, { recentLimit: 5 }),
      flushIntervalMs: 60_000,
    });
    const apps = await Promise.all(
      [1, 2, 3].map(() => serve({ idempotency: { store, service: 'orders', stats: stats() } })),
    );
    try {
      const [first, second, center] = apps;
      first.ledger.script.set('order-x1', 'fail');
      await first.sqs.send(orderCreated('x1'));
      await second.sqs.send(orderCreated('x2'));
      await second.sqs.send(orderCreated('x2'));
      await second.sqs.send({ type: 'order_refunded', id: 'z' });
      for (let i = 0; i < 12; i++) await first.sqs.send(orderCreated('x2')); // duplicates beyond the cap
      await Promise.all([first, second].map((app) => app.app.get(IdempotencyStats).flush()));

      const { body } = await center.get<CenterOverview>('/idempotency/api/v1/overview');
      expect(body).toMatchObject({ countersScope: 'fleet', activityScope: 'fleet' });
      expect(body.lastHour).toMatchObject({ handled: 1, failed: 1, duplicates: 13, invalid: 1 });
      expect(body.instances.map((instance) => instance.counters.handled).sort()).toEqual([0, 0, 1]);
      expect(body.unrouted).toEqual([expect.objectContaining({ eventType: 'order_refunded', count: 1 })]);
      expect(body.store.claims.claims).toBe(15);
      const recent = body.eventTypes.find((type) => type.eventType === 'order_created')!.recent;
      // The failure survives the storm of duplicates: failures and repeats are capped apart.
      expect(recent.filter((record) => record.status === 'FAILED').map((record) => record.key)).toEqual([
        'x1',
      ]);
      expect(await redis.xlen(`{${key}}:recent:repeats`)).toBeLessThanOrEqual(5 + 100);
      // Every key shares the counters' hash slot, so a flush is one pipeline on Redis Cluster too.
      const keys = await redis.keys(`*${key}*`);
      const slots = new Set(
        await Promise.all(keys.map((k) => redis.call('CLUSTER', 'KEYSLOT', k).catch(() => slotOf(k)))),
      );
      expect(keys.length).toBeGreaterThanOrEqual(5);
      expect(slots.size).toBe(1);
      const minuteTtl = await redis.pttl(keys.find((k) => k.includes(':m:'))!);
      expect(minuteTtl).toBeGreaterThan(60 * 60_000);
      expect(minuteTtl).toBeLessThanOrEqual(65 * 60_000);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      const keys = await redis.keys(`*${key}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });

  withRedis.it(
    'skips recent records and heartbeats that are not what it wrote (null, {}, not JSON), still answering',
    async () => {
      const redis = new Redis(process.env.REDIS_URL!);
      const key = `center-foreign-entries:${Date.now()}:${Math.random()}`;
      const statsStore = new RedisIdempotencyStatsStore(redis, key);
      const served = await serve({ idempotency: { stats: { store: statsStore, flushIntervalMs: 60_000 } } });
      try {
        served.ledger.script.set('order-f0', 'fail');
        await served.sqs.send(orderCreated('f0')); // one failure in the recent records
        await served.app.get(IdempotencyStats).flush();
        const [minuteKey] = await redis.keys(`*${key}*:m:*`);
        const base = minuteKey.slice(0, minuteKey.lastIndexOf(':m:'));
        // What another version of the library, or a corrupted key, could have left beside ours.
        for (const text of ['null', '{}', '"text"', 'not json'])
          await redis.xadd(`${base}:recent:failures`, '*', 'r', text);
        for (const [id, text] of [
          ['ghost-null', 'null'],
          ['ghost-empty', '{}'],
          ['ghost-broken', '{'],
        ]) {
          await redis.zadd(`${base}:instances`, Date.now(), id);
          await redis.set(`${base}:instance:${id}`, text);
        }

        const activity = await statsStore.readActivity();
        expect(activity.records.map((record) => record.key)).toEqual(['f0']);
        expect(activity.instances).toHaveLength(1);
        const { status, body } = await served.get<CenterOverview>('/idempotency/api/v1/overview');
        expect(status).toBe(200);
        expect(body.lastHour).toMatchObject({ failed: 1 });
      } finally {
        await served.close();
        const keys = await redis.keys(`*${key}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
    },
  );

  withRedis.it(
    'ignores minute fields it does not understand, such as a claim bucket past the histogram',
    async () => {
      const redis = new Redis(process.env.REDIS_URL!);
      const key = `center-foreign:${Date.now()}:${Math.random()}`;
      const statsStore = new RedisIdempotencyStatsStore(redis, key);
      const served = await serve({ idempotency: { stats: { store: statsStore, flushIntervalMs: 60_000 } } });
      try {
        for (let i = 0; i < 3; i++) await served.sqs.send(orderCreated(`g${i}`));
        await served.app.get(IdempotencyStats).flush();
        // Fields another writer (or a corrupted hash) left: an index that would size the histogram to
        // four million entries, indexes that are not the decimal text of a bucket, counts that are not counts.
        const foreign = [
          ['\tclaim\t4000000', '5'],
          ['\tclaim\t98', '5'],
          ['\tclaim\t-1', '5'],
          ['\tclaim\t', '5'],
          ['\tclaim\t0x1', '5'],
          ['\tclaim\t01', '5'],
          ['\tclaim\t1.5', '5'],
          ['\tclaim\t96', '1e400'], // the failed claims' field, none here
          ['\tclaim\t95', 'many'],
          ['order_created\tFAILED', '2.5'],
          ['order_created\tGONE', '5'],
        ];
        for (const minuteKey of await redis.keys(`*${key}*:m:*`))
          for (const [field, count] of foreign) await redis.hset(minuteKey, field, count);

        const activity = await statsStore.readActivity();
        expect(activity.claims.length).toBeGreaterThan(0);
        for (const { counts } of activity.claims) expect(counts.length).toBeLessThanOrEqual(CLAIMS_INDEX + 1);
        expect(activity.trends.map(({ eventType, status }) => `${eventType} ${status}`)).toEqual(
          activity.trends.map(() => 'order_created OK'),
        );
        expect(activity.trends.reduce((sum, { count }) => sum + count, 0)).toBe(3);
        const { status, body } = await served.get<CenterOverview>('/idempotency/api/v1/overview');
        expect(status).toBe(200);
        expect(body.store.claims).toMatchObject({ claims: 3, timed: 3, errors: 0 });
        expect(body.lastHour).toMatchObject({ handled: 3 });
      } finally {
        await served.close();
        const keys = await redis.keys(`*${key}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
    },
  );
});

withRedis.describe('the Idempotency Center and @EventPattern() handlers', () => {
  @Controller()
  class PaymentsController {
    @EventPattern('payment_captured')
    @Idempotent()
    async onCaptured(@Payload() event: { id: string; fail?: boolean }) {
      if (event.fail) throw new Error(`card declined for ${event.id}`);
    }
  }

  it('journals the calls @Idempotent() counts on another transport', async () => {
    const url = new URL(process.env.REDIS_URL!);
    const options = { host: url.hostname, port: Number(url.port) };
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ stats: {} })],
      controllers: [PaymentsController],
    })
      .setLogger(new CapturingLogger())
      .compile();
    const microservice = moduleRef.createNestMicroservice({ transport: Transport.REDIS, options });
    await microservice.listen();
    const client = ClientProxyFactory.create({ transport: Transport.REDIS, options });
    try {
      await client.connect();
      await lastValueFrom(client.emit('payment_captured', { id: 'pay-1' }));
      await lastValueFrom(client.emit('payment_captured', { id: 'pay-2', fail: true }));
      const stats = microservice.get(IdempotencyStats);
      await waitFor(async () => (await stats.activity()).trends.length >= 2, 30_000, 'two journaled calls');
      const activity = await stats.activity();
      expect(activity.records).toEqual([
        expect.objectContaining({
          status: 'FAILED',
          eventType: 'payment_captured',
          key: 'pay-2',
          reason: 'card declined for pay-2',
        }),
      ]);
      expect(activity.trends.map(({ status, count }) => [status, count]).sort()).toEqual([
        ['FAILED', 1],
        ['OK', 1],
      ]);
    } finally {
      await client.close();
      await microservice.close();
    }
  });
});

/** Redis Cluster's CRC16 slot of a key (the test Redis is not a cluster: CLUSTER KEYSLOT is refused). */
function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}
