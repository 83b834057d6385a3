import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { IsString } from 'class-validator';
import {
  Idempotent,
  IdempotencyModule,
  SqsBatchHandler,
  SqsEvent,
  SqsModule,
  SqsRecordTimeoutError,
} from '../lib';
import { SqsServer } from '../lib/microservices';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { IdempotencyStats } from '../lib/center';
import { buildSqsRecord } from '../lib/testing';
import { SqsQueueRegistry } from '../lib/sqs/nest/sqs-queue.registry';
import { row, RowsLedger, RowsModule } from './fixtures/batch-handler-rows.fixture';
import { requires } from './support/prerequisites';
import { RedisServerHandle, startRedisServer } from './support/redis-server';
import { createTestApp, TestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { usePollingHarness } from './support/polling-harness';
import { fauxqsClientConfig, waitFor as waitForQueue } from './support/sqs-queues';

/**
 * `@SqsBatchHandler()` on real parts: one round trip to Redis for a 10-record batch's claims (and one for
 * its completions), the lease heartbeat over every key of a long call, `handleMessageTimeout` on the
 * call, the polling host on fauxqs, and what start-up refuses or warns about (SqsServer, validators,
 * key paths).
 */

const withRedis = requires('redis-server');

withRedis.describe('batch handlers on Redis', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  let app: TestApp | undefined;
  beforeAll(async () => {
    server = await startRedisServer(); // its own: MONITOR sees every client's commands
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const start = async (options: { inProgressTtl?: number; heartbeat?: boolean } = {}) => {
    app = await createTestApp({
      idempotency: {
        store: new RedisIdempotencyStore(redis, { serverCheck: 'off' }),
        service: 'rows',
        keyPrefix: `batch-${randomUUID()}`,
        stats: {},
        ...options,
      },
      imports: [RowsModule],
    });
    return { app, ledger: app.get(RowsLedger) };
  };

  it('claims a 10-record batch in one round trip and completes it in one more', async () => {
    const { app, ledger } = await start();
    await app.sqs.sendBatch(Array.from({ length: 10 }, (_, i) => row(`warm${i}`))); // scripts loaded

    let statuses: string[] = [];
    const sent = await commandsSentDuring(server.url, async () => {
      ({ statuses } = await app.sqs.sendBatch(Array.from({ length: 10 }, (_, i) => row(`e${i}`))));
    });

    expect(statuses).toEqual(Array(10).fill('OK'));
    expect(sent).toEqual(['evalsha', 'evalsha']);
    expect(ledger.calls.map((call) => call.rows.length)).toEqual([10, 10]);

    // A redelivery of the batch: one round trip, nothing reaches the handler.
    const again = await commandsSentDuring(server.url, async () => {
      ({ statuses } = await app.sqs.sendBatch(Array.from({ length: 10 }, (_, i) => row(`e${i}`))));
    });
    expect(statuses).toEqual(Array(10).fill('DUPLICATE'));
    expect(again).toEqual(['evalsha']);
    expect(ledger.calls).toHaveLength(2);
    const { totals } = await app.get(IdempotencyStats).snapshot();
    expect(totals).toMatchObject({ handled: 20, duplicates_completed: 10 });
  });

  it('keeps every key of a long call claimed with the heartbeat: a copy meets IN_PROGRESS, not a second run', async () => {
    // A second: renewals every third of it stay on time on a loaded machine.
    const LEASE = 1_000;
    const { app, ledger } = await start({ inProgressTtl: LEASE, heartbeat: true });
    let release!: () => void;
    ledger.hold = new Promise<void>((resolve) => (release = resolve));
    const first = app.sqs.sendBatch([row('a'), row('b')]);
    await waitFor(() => ledger.calls.length === 1, 5_000, 'the call');
    ledger.hold = undefined;
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, LEASE * 2.2)); // past two whole leases
    expect(performance.now() - started).toBeGreaterThan(LEASE * 2);

    const copy = await app.sqs.sendBatch([row('a'), row('b')]);
    release();

    expect(copy.statuses).toEqual(['IN_PROGRESS', 'IN_PROGRESS']);
    expect((await first).statuses).toEqual(['OK', 'OK']);
    expect(ledger.calls).toHaveLength(1);
    expect((await app.sqs.sendBatch([row('a'), row('b')])).statuses).toEqual(['DUPLICATE', 'DUPLICATE']);
  });

  it('fails the call past handleMessageTimeout, holding its claims until it ends, each record logged once', async () => {
    const { app, ledger } = await start();
    let release!: () => void;
    ledger.hold = new Promise<void>((resolve) => (release = resolve));
    const records = [buildSqsRecord(row('a')), buildSqsRecord(row('b'))];

    const results = await app
      .get(SqsQueueRegistry)
      .dispatchBatch(records, { queue: 'rows', recordTimeoutMs: 100 });

    expect(results.map((result) => result.status)).toEqual(['FAILED', 'FAILED']);
    expect(results[0].error).toBeInstanceOf(SqsRecordTimeoutError);
    ledger.hold = undefined;
    // A redelivery while the call runs on meets its claims.
    expect((await app.sqs.sendBatch([row('a')])).statuses).toEqual(['IN_PROGRESS']);
    release();
    await waitFor(
      () => app.logs.lines.filter((line) => /past handleMessageTimeout/.test(line.message)).length === 2,
      5_000,
      'the late ends',
    );
    expect((await app.sqs.sendBatch([row('a'), row('b')])).statuses).toEqual(['DUPLICATE', 'DUPLICATE']);
    const lines = app.logs.lines.filter(
      (line) => line.context === 'SqsRecord' && line.message.includes(`messageId=${records[0].messageId} `),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0].message).toMatch(/^status=FAILED /);
  });
});

describe('batch handlers on the polling host (fauxqs)', () => {
  const polling = usePollingHarness();
  const { queues } = polling;

  it('handles a queue of new events and copies, writing each row once', async () => {
    const queue = await polling.queues.create('rows');
    const app = await polling.startApp({
      queues: [{ name: 'rows', url: queue.url }],
      batchSize: 10,
      imports: [RowsModule],
    });
    const ledger = app.get(RowsLedger);
    const bodies = Array.from({ length: 10 }, (_, i) => row(`p${i}`));
    await queues.sendBatch(queue.url, bodies);
    await queues.sendBatch(queue.url, bodies); // producer retries: new messages, same keys

    await waitForQueue(async () => (await queues.depth(queue.url)) === 0, 'every message acked', 30_000);
    expect([...ledger.written].sort()).toEqual(bodies.map((body) => body.row).sort());
    expect(ledger.calls.every((call) => call.instances)).toBe(true);
  });
});

@SqsEvent('unchecked_row')
class UncheckedRow {
  id!: string;
}

@SqsEvent('keyed_row')
class KeyedRow {
  @IsString() id!: string;
}

@Injectable()
class WarnedHandlers {
  @SqsBatchHandler(UncheckedRow)
  onUnchecked(): void {}

  @SqsBatchHandler(KeyedRow)
  @Idempotent('meta.eventId')
  onKeyed(): void {}
}

@Module({ providers: [WarnedHandlers] })
class WarnedModule {}

describe('batch handlers at start-up', () => {
  it('earn the warnings of per-record handlers: an event class without validators, a key path it cannot have', async () => {
    const app = await createTestApp({ imports: [WarnedModule] });
    try {
      const warnings = app.sqs.startupWarnings.join('\n');
      expect(warnings).toMatch(
        /UncheckedRow \(the event of WarnedHandlers\.onUnchecked\) has no class-validator decorators/,
      );
      expect(warnings).toMatch(
        /WarnedHandlers\.onKeyed[^\n]*meta\.eventId|meta\.eventId[^\n]*WarnedHandlers\.onKeyed/,
      );
    } finally {
      await app.close();
    }
  });

  it('are refused by SqsServer, naming the hosts that run them', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({}),
        SqsModule.forRoot({
          queues: [{ name: 'rows', url: 'http://localhost:1/000000000000/rows', consume: false }],
        }),
        RowsModule,
      ],
    }).compile();
    moduleRef.useLogger(false);
    const microservice = moduleRef.createNestMicroservice({
      strategy: new SqsServer({
        queues: [{ name: 'rows', url: 'http://localhost:1/000000000000/rows' }],
        client: fauxqsClientConfig(),
      }),
    });
    try {
      await expect(microservice.listen()).rejects.toThrow(
        /SqsServer: queue "rows" has an @SqsBatchHandler\(\), which SqsServer does not run[\s\S]*createSqsLambdaHandler/,
      );
    } finally {
      await microservice.close().catch(() => undefined);
    }
  });
});

/** The commands clients sent the server while `run` ran (scripts' own calls left out). */
async function commandsSentDuring(url: string, run: () => Promise<unknown>): Promise<string[]> {
  const probe = new Redis(url);
  const watcher = new Redis(url);
  await Promise.all([probe.ping(), watcher.ping()]);
  const monitor = await watcher.monitor();
  const marker = `end-${randomUUID()}`;
  const seen: string[] = [];
  let ended!: () => void;
  const end = new Promise<void>((resolve) => (ended = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = String(args[0]).toLowerCase();
    if (name === 'echo' && args[1] === marker) ended();
    else if (source !== 'lua') seen.push(name);
  });
  try {
    await run();
    await probe.echo(marker);
    await end;
  } finally {
    monitor.disconnect();
    watcher.disconnect();
    probe.disconnect();
  }
  return seen;
}
