import { CanActivate, ExecutionContext, Injectable, Module, UseInterceptors } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import {
  DataPoint,
  Histogram,
  MeterProvider,
  MetricReader,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { IsString } from 'class-validator';
import {
  Idempotent,
  IdempotencyModule,
  InMemoryIdempotencyStore,
  SkipMessageException,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import {
  IdempotencyCenterModule,
  IdempotencyStats,
  InMemoryIdempotencyStatsStore,
  RecordTimingInterceptor,
} from '../lib/center';
import { METRIC_PREFIX } from '../lib/observability/record-metrics';
import { RedisIdempotencyStatsStore } from '../lib/stores/redis';
import { SqsTestClient } from '../lib/testing';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { createTestApp, FakeClock } from './support/test-app';
import { waitFor } from './support/wait-for';
import { requires } from './support/prerequisites';

const withRedis = requires('redis-server');

/** Reads metrics on demand (the SDK's in-memory way to test instruments). */
class TestMetricReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

async function mixedTraffic(sqs: SqsTestClient, ledger: OrdersLedger): Promise<void> {
  await sqs.send(orderCreated('e1')); // handled
  await sqs.send(orderCreated('e1')); // duplicate of a completed event
  ledger.script.set('order-e2', 'skip');
  await sqs.send(orderCreated('e2')); // skipped
  ledger.script.set('order-e3', 'fail');
  await sqs.send(orderCreated('e3')); // failed
  await sqs.send('{"type":"order_created"'); // invalid
  await sqs.send({ type: 'order_cancelled', id: 'c1', orderId: 'o1' }); // handled, not idempotent
}

describe('IdempotencyStats', () => {
  it('counts each outcome per event type and handler, and says which handlers are covered', async () => {
    const app = await createTestApp({ idempotency: { stats: {} }, imports: [OrdersModule] });
    await mixedTraffic(app.sqs, app.get(OrdersLedger));
    const snapshot = await app.get(IdempotencyStats).snapshot();
    expect(snapshot.scope).toBe('instance');
    expect(snapshot.store).toBe('InMemoryIdempotencyStore');
    const created = snapshot.eventTypes.find((type) => type.eventType === 'order_created')!;
    expect(created.covered).toBe(true);
    const handler = created.handlers.find((h) => h.handler === 'OrdersHandler.onOrderCreated')!;
    expect(handler).toMatchObject({
      idempotent: true,
      keySource: 'keyPath "id"',
      scope: 'order_created',
      ttl: 86_400_000,
      inProgressTtl: 300_000,
    });
    expect(handler.counters).toMatchObject({ handled: 1, duplicates_completed: 1, skipped: 1, failed: 1 });
    expect(created.duplicateRate).toBeCloseTo(1 / 4);
    const cancelled = snapshot.eventTypes.find((type) => type.eventType === 'order_cancelled')!;
    expect(cancelled.covered).toBe(false);
    expect(cancelled.handlers[0]).toMatchObject({
      handler: 'OrdersHandler.onOrderCancelled',
      idempotent: false,
    });
    expect(snapshot.eventTypes.find((type) => type.eventType === '(unknown)')?.totals.invalid).toBe(1);
    expect(snapshot.totals).toMatchObject({
      handled: 2,
      duplicates_completed: 1,
      skipped: 1,
      failed: 1,
      invalid: 1,
    });
    await app.close();
  });

  it('counts duplicates in flight, lost leases and store errors', async () => {
    const clock = new FakeClock();
    const store = new InMemoryIdempotencyStore({ clock: clock.read });
    const app = await createTestApp({
      idempotency: { store, inProgressTtl: 1_000, stats: {} },
      imports: [OrdersModule],
    });
    const ledger = app.get(OrdersLedger);
    const hold = deferred();
    ledger.script.set('order-e1', hold.promise);
    const first = app.sqs.send(orderCreated('e1'));
    await waitFor(() => ledger.calls === 1);
    await app.sqs.send(orderCreated('e1')); // in flight
    clock.advance(1_000);
    const second = app.sqs.send(orderCreated('e1')); // takes over the expired lease
    await waitFor(() => ledger.calls === 2);
    hold.resolve();
    await Promise.all([first, second]); // the first one's completion is refused: a lost lease
    store.tryAcquire = async () => {
      throw new Error('store down');
    };
    await app.sqs.send(orderCreated('e9'));
    const snapshot = await app.get(IdempotencyStats).snapshot();
    const created = snapshot.eventTypes.find((type) => type.eventType === 'order_created')!;
    const counters = created.handlers.find(
      (handler) => handler.handler === 'OrdersHandler.onOrderCreated',
    )!.counters;
    expect(counters).toMatchObject({
      duplicates_in_flight: 1,
      handled: 2,
      leases_lost: 1,
      store_errors: 1,
      failed: 1,
    });
    await app.close();
  });

  withRedis.it(
    'shares counters across instances through Redis (one pipelined flush per interval)',
    async () => {
      const redis = new Redis(process.env.REDIS_URL!);
      const key = `stats-test:${Date.now()}:${Math.random()}`;
      const sharedStore = new InMemoryIdempotencyStore();
      const apps = await Promise.all(
        [1, 2].map(() =>
          createTestApp({
            idempotency: {
              store: sharedStore,
              stats: { store: new RedisIdempotencyStatsStore(redis, key), flushIntervalMs: 50 },
            },
            imports: [OrdersModule],
          }),
        ),
      );
      try {
        await apps[0].sqs.send(orderCreated('s1'));
        await apps[1].sqs.send(orderCreated('s1'));
        await apps[1].sqs.send(orderCreated('s2'));
        // Each instance flushes in the background; the fleet view lags by at most one interval.
        await Promise.all(apps.map((app) => app.get(IdempotencyStats).flush()));
        for (const app of apps) {
          const snapshot = await app.get(IdempotencyStats).snapshot();
          expect(snapshot.scope).toBe('fleet');
          expect(
            snapshot.eventTypes.find((type) => type.eventType === 'order_created')?.totals,
          ).toMatchObject({
            handled: 2,
            duplicates_completed: 1,
          });
        }
      } finally {
        await Promise.all(apps.map((app) => app.close()));
        await redis.del(key);
        redis.disconnect();
      }
    },
  );
});

describe('keyless runs', () => {
  @SqsEvent('heartbeat_ping')
  class HeartbeatPing {
    @IsString() host!: string;
  }
  @Injectable()
  class Pings {
    @SqsMessageHandler(HeartbeatPing)
    @Idempotent({ requireKey: false })
    async onPing(): Promise<void> {}
  }

  it('counts handler runs without dedup as keyless', async () => {
    const app = await createTestApp({ idempotency: { stats: {} }, providers: [Pings] });
    await app.sqs.send({ host: 'a' });
    await app.sqs.send({ host: 'a', id: 'k1' });
    const type = (await app.get(IdempotencyStats).snapshot()).eventTypes.find(
      (t) => t.eventType === 'heartbeat_ping',
    )!;
    expect(type.totals).toMatchObject({ handled: 2, keyless: 1 });
    await app.close();
  });
});

describe('OpenTelemetry metrics', () => {
  function pointsOf(resourceMetrics: ResourceMetrics, name: string): DataPoint<number | Histogram>[] {
    const points: DataPoint<number | Histogram>[] = [];
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.descriptor.name === name)
          points.push(...(metric.dataPoints as DataPoint<number | Histogram>[]));
      }
    }
    return points;
  }

  it('exports counters with event_type/status attributes and a duration histogram', async () => {
    const reader = new TestMetricReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const app = await createTestApp({ idempotency: { stats: { meterProvider } }, imports: [OrdersModule] });
    await mixedTraffic(app.sqs, app.get(OrdersLedger));
    const { resourceMetrics } = await reader.collect();
    const handled = pointsOf(resourceMetrics, `${METRIC_PREFIX}.handled`);
    expect(handled.map((point) => [point.attributes, point.value])).toEqual(
      expect.arrayContaining([
        [{ event_type: 'order_created', handler: 'OrdersHandler.onOrderCreated', status: 'OK' }, 1],
        [{ event_type: 'order_cancelled', handler: 'OrdersHandler.onOrderCancelled', status: 'OK' }, 1],
      ]),
    );
    expect(pointsOf(resourceMetrics, `${METRIC_PREFIX}.duplicates_completed`)[0].value).toBe(1);
    expect(pointsOf(resourceMetrics, `${METRIC_PREFIX}.invalid`)[0].attributes).toEqual({
      event_type: '(unknown)',
      handler: '-',
      status: 'INVALID',
    });
    const durations = pointsOf(resourceMetrics, `${METRIC_PREFIX}.record.duration`);
    const count = durations.reduce((sum, point) => sum + (point.value as Histogram).count, 0);
    expect(count).toBe(6);
    await app.close();
    await meterProvider.shutdown();
  });

  it('uses the global meter provider by default (a no-op without an SDK)', async () => {
    const reader = new TestMetricReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(meterProvider);
    try {
      const app = await createTestApp({ imports: [OrdersModule] });
      await app.sqs.send(orderCreated('g1'));
      const { resourceMetrics } = await reader.collect();
      expect(pointsOf(resourceMetrics, `${METRIC_PREFIX}.handled`)[0].value).toBe(1);
      await app.close();
    } finally {
      metrics.disable();
      await meterProvider.shutdown();
    }
  });
});

@Injectable()
class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest().headers['x-admin'] === 'yes';
  }
}

describe('IdempotencyCenterModule', () => {
  async function serve() {
    @Module({
      imports: [
        IdempotencyModule.forRoot({}),
        SqsModule.forRoot({}),
        OrdersModule,
        IdempotencyCenterModule.forRoot({ guards: [AdminGuard] }),
      ],
    })
    class CenterApp {}
    const moduleRef = await Test.createTestingModule({ imports: [CenterApp] })
      .setLogger(new CapturingLogger())
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    return { app, base, sqs: new SqsTestClient(app), ledger: app.get(OrdersLedger) };
  }

  it('serves the counters as JSON and as a page, behind the user guard', async () => {
    const { app, base, sqs, ledger } = await serve();
    await mixedTraffic(sqs, ledger);
    expect((await fetch(`${base}/idempotency`)).status).toBe(403);
    const json = (await (await fetch(`${base}/idempotency`, { headers: { 'x-admin': 'yes' } })).json()) as {
      totals: Record<string, number>;
    };
    expect(json.totals).toMatchObject({
      handled: 2,
      duplicates_completed: 1,
      skipped: 1,
      failed: 1,
      invalid: 1,
    });
    const page = await fetch(`${base}/idempotency/ui`, { headers: { 'x-admin': 'yes' } });
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('<section data-event-type="order_created">');
    expect(html).toMatch(
      /data-handler="OrdersHandler.onOrderCreated">[\s\S]*?<td data-counter="handled">1<\/td>/,
    );
    expect(html).toContain('duplicate rate <span data-duplicate-rate>25.0%</span>');
    expect(html).toContain('not covered');
    await app.close();
  });

  it('turns on the counters with the stats options, once, whether or not stats asks for them too', async () => {
    for (const stats of [
      undefined,
      { store: new InMemoryIdempotencyStatsStore(), flushIntervalMs: 60_000 },
    ]) {
      const moduleRef = await Test.createTestingModule({
        imports: [
          IdempotencyModule.forRoot({ stats }),
          SqsModule.forRoot({}),
          OrdersModule,
          IdempotencyCenterModule.forRoot({ allowAnonymous: true }),
        ],
      })
        .setLogger(new CapturingLogger())
        .compile();
      await moduleRef.init();
      await new SqsTestClient(moduleRef).send(orderCreated('once'));
      const snapshot = await moduleRef.get(IdempotencyStats).snapshot();
      expect(snapshot.scope).toBe(stats ? 'fleet' : 'instance');
      expect(snapshot.totals.handled).toBe(1);
      await moduleRef.close();
      // Closing flushed the counters to the shared store once.
      if (stats)
        expect(await stats.store.read()).toEqual({
          'order_created\tOrdersHandler.onOrderCreated\thandled': 1,
        });
    }
  });

  it('refuses to start without a guard unless told the Center may be anonymous', () => {
    expect(() => IdempotencyCenterModule.forRoot()).toThrow('pass guards: [YourAdminGuard]');
    expect(() => IdempotencyCenterModule.forRoot({ allowAnonymous: true })).not.toThrow();
  });
});

describe('the record log line', () => {
  it("logs fields as an object with format 'json', and hashes keys when asked", async () => {
    const app = await createTestApp({
      sqs: { recordLog: { format: 'json', hashKeys: true } },
      imports: [OrdersModule],
    });
    const { record } = await app.sqs.send(orderCreated('secret-email@example.com'));
    const line = app.logs.lines.find((entry) => entry.context === 'SqsRecord');
    expect(line).toBeDefined();
    expect(JSON.parse(line!.message)).toMatchObject({
      status: 'OK',
      eventType: 'order_created',
      messageId: record.messageId,
      queue: 'test-queue',
      receiveCount: 1,
    });
    expect(line!.message).not.toContain('secret-email');
    expect(JSON.parse(line!.message).key).toMatch(/^h:[0-9a-f]{16}$/);
    await app.close();
  });

  it('can be turned off', async () => {
    const app = await createTestApp({ sqs: { recordLog: false }, imports: [OrdersModule] });
    await app.sqs.send(orderCreated('quiet'));
    expect(app.logs.lines.filter((entry) => entry.context === 'SqsRecord')).toEqual([]);
    await app.close();
  });
});

describe('RecordTimingInterceptor', () => {
  @SqsEvent('timed')
  class Timed {
    @IsString() id!: string;
  }
  @Injectable()
  class TimedHandler {
    entered = deferred();
    gate: Promise<void> | undefined;

    // Decorators apply bottom-up: written below @Idempotent(), it runs outside the claim and
    // also times duplicates.
    @SqsMessageHandler(Timed)
    @Idempotent()
    @UseInterceptors(RecordTimingInterceptor)
    async onTimed(event: Timed): Promise<void> {
      if (event.id === 'skip') throw new SkipMessageException('not for us');
      if (event.id === 'boom') throw new Error('boom');
      this.entered.resolve();
      await this.gate;
    }
  }

  it('applied alone, logs each call with its outcome, key and duration', async () => {
    const app = await createTestApp({ sqs: { recordLog: false }, providers: [TimedHandler] });
    await app.sqs.send({ id: 't1' });
    await app.sqs.send({ id: 't1' });
    const lines = app.logs.lines
      .filter((line) => line.context === 'RecordTiming')
      .map((line) => line.message);
    expect(lines).toEqual([
      expect.stringMatching(/^status=OK handler=TimedHandler.onTimed key=t1 durationMs=\d+\.\d$/),
      expect.stringMatching(/^status=DUPLICATE handler=TimedHandler.onTimed key=t1 durationMs=/),
    ]);
    await app.close();
  });

  it('names skips, failures and in-flight duplicates as the record log does, at its levels', async () => {
    const app = await createTestApp({ sqs: { recordLog: false }, providers: [TimedHandler] });
    const handler = app.get(TimedHandler);
    const release = deferred();
    handler.gate = release.promise;
    const first = app.sqs.send({ id: 'held' });
    await handler.entered.promise;
    await app.sqs.send({ id: 'held' });
    release.resolve();
    await first;
    await app.sqs.send({ id: 'skip' });
    await app.sqs.send({ id: 'boom' });
    const lines = app.logs.lines
      .filter((line) => line.context === 'RecordTiming')
      .map((line) => `${line.level} ${line.message.replace(/ durationMs=[\d.]+/, '')}`);
    expect(lines).toEqual([
      expect.stringMatching(
        /^warn status=IN_PROGRESS handler=TimedHandler.onTimed key=held reason=".*being processed/,
      ),
      'log status=OK handler=TimedHandler.onTimed key=held',
      'log status=SKIPPED handler=TimedHandler.onTimed key=skip reason="not for us"',
      'error status=FAILED handler=TimedHandler.onTimed key=boom reason="boom"',
    ]);
    await app.close();
  });
});
