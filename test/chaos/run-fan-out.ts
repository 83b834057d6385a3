import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { Redis } from 'ioredis';
import { seededRandom } from '../../sample/demo/seeded-random';
import { RedisServerHandle, startRedisServer } from '../support/redis-server';
import { TestQueues } from '../support/sqs-queues';
import { chaosEventBody } from './chaos-event';
import { ChaosProducer } from './chaos-producer';
import { WorkerPool } from './worker-pool';

/**
 * The fan-out variant of the chaos run: two services (`billing`, `shipping`) each consume their own
 * queue, and every event reaches both queues, as an SNS topic fans it out. Both services share one
 * store Redis and one `keyPrefix`; only their `service` tells their keys apart. Each runs its own
 * worker processes, and one worker of each is SIGKILLed mid-handler while producer retries
 * duplicate a share of the events. Afterwards each service must have applied every event exactly
 * once: with one shared key space, the second service would have acked each event as a duplicate
 * of the first one's and applied (almost) none.
 */
export const FAN_OUT_SERVICES = ['billing', 'shipping'] as const;

/** The size of the fan-out run; small enough for `npm test`. */
export interface FanOutProfile {
  events: number;
  workersPerService: number;
  seed: number;
  /** Share of events the producer sends twice (a retry, new message id) to each queue. */
  retryShare: number;
  visibilityTimeout: number;
  /** Lease: short, so the claims orphaned by the kills expire within the run. */
  inProgressTtl: number;
  maxReceiveCount: number;
  timeoutMs: number;
}

export const FAN_OUT_PROFILE: FanOutProfile = {
  events: 400,
  workersPerService: 2,
  seed: 20_261_212,
  retryShare: 0.25,
  visibilityTimeout: 2,
  inProgressTtl: 6_000,
  maxReceiveCount: 12,
  timeoutMs: 90_000,
};

/** What one service did. */
export interface FanOutServiceResult {
  service: string;
  /** Ledger: event id → times this service applied it. */
  ledger: Map<string, number>;
  kill: string;
  duplicatesAcked: number;
  /** Queue and dead-letter queue depth at the end. */
  depths: { queue: number; dlq: number };
}

export interface FanOutResult {
  eventIds: string[];
  services: FanOutServiceResult[];
  messagesSentPerQueue: number;
  crashes: string[];
}

export async function runFanOut(profile: FanOutProfile, sqsConfig: SQSClientConfig): Promise<FanOutResult> {
  const runId = `fanout${Date.now().toString(36)}`;
  const queues = new TestQueues(sqsConfig);
  const servers: RedisServerHandle[] = [];
  const pools: WorkerPool[] = [];
  let ledgerClient: Redis | undefined;
  try {
    const storeServer = await startRedisServer();
    servers.push(storeServer);
    const ledgerServer = await startRedisServer();
    servers.push(ledgerServer);
    const ledger = (ledgerClient = new Redis(ledgerServer.url));
    const services = await Promise.all(
      FAN_OUT_SERVICES.map(async (service) => {
        const queue = await queues.create(`fanout-${service}`, {
          visibilityTimeout: profile.visibilityTimeout,
          maxReceiveCount: profile.maxReceiveCount,
        });
        const ledgerKey = `${runId}:${service}:ledger`;
        const pool = new WorkerPool(
          {
            queueUrl: queue.url,
            sqsEndpoint: String(sqsConfig.endpoint),
            storeUrl: storeServer.url,
            ledgerUrl: ledgerServer.url,
            ledgerKey,
            // One key prefix for both: only the service identity keeps their keys apart.
            keyPrefix: runId,
            service,
            visibilityTimeout: profile.visibilityTimeout,
            inProgressTtl: profile.inProgressTtl,
            heartbeat: false,
            failureRate: 0.03,
          },
          profile.seed,
          profile.workersPerService,
        );
        pools.push(pool);
        return { service, queue, ledgerKey, pool, producer: new ChaosProducer(queues.client, queue.url) };
      }),
    );
    await Promise.all(services.map(({ pool }) => pool.start()));

    const random = seededRandom(profile.seed);
    const events = Array.from({ length: profile.events }, (_, n) => {
      const id = `${runId}-e${n}`;
      const workMs = random() < 0.1 ? 50 + Math.floor(random() * 250) : Math.floor(random() * 20);
      return { id, body: chaosEventBody({ id, workMs }), retried: random() < profile.retryShare };
    });
    // From the moment the workers are ready: their start-up (ts-node compiling the library) is not the run.
    const deadline = performance.now() + profile.timeoutMs;
    const until = async (condition: () => Promise<boolean>, what: string) => {
      while (!(await condition())) {
        const crashes = pools.flatMap((pool) => pool.crashes);
        if (crashes.length > 0) throw new Error(`worker crashed: ${crashes.join('; ')}`);
        if (performance.now() > deadline) throw new Error(`fan-out run timed out waiting for ${what}`);
        await sleep(100);
      }
    };

    // Two waves. Once a service has applied half of the first, one of its workers is told to die:
    // it SIGKILLs itself mid-handler, while the second wave arrives.
    const half = Math.ceil(events.length / 2);
    const waves = [events.slice(0, half), events.slice(half)];
    let messagesSentPerQueue = 0;
    const sendWave = async (wave: typeof events) => {
      const messages = wave.flatMap(({ body, retried }) => [
        { body, kind: 'firstCopies' as const },
        ...(retried ? [{ body, kind: 'inFlightRetries' as const }] : []),
      ]);
      // The fan-out: the same messages to both queues.
      await Promise.all(services.map(({ producer }) => producer.send(messages)));
      messagesSentPerQueue += messages.length;
    };
    await sendWave(waves[0]);
    const kills = services.map(async ({ service, ledgerKey, pool }) => {
      await until(async () => (await ledger.hlen(ledgerKey)) >= half / 2, `${service} to apply half a wave`);
      return pool.kill(0);
    });
    await sendWave(waves[1]);
    const killLines = await Promise.all(kills);

    // Until every queue is drained (nothing visible, in flight or delayed: nothing more will be applied)
    // and every ledger complete; a ledger still short after the queues stayed drained for a while is
    // the result, not a reason to wait (it is what shared keys produce: acked duplicates never applied).
    let drainedChecks = 0;
    await until(async () => {
      const depths = await Promise.all(services.map(({ queue }) => queues.depth(queue.url)));
      if (depths.some((depth) => depth > 0)) {
        drainedChecks = 0;
        return false;
      }
      const applied = await Promise.all(services.map(({ ledgerKey }) => ledger.hlen(ledgerKey)));
      return applied.every((count) => count === events.length) || ++drainedChecks >= 10;
    }, 'the queues to drain');
    await Promise.all(pools.map((pool) => pool.stop()));

    const results: FanOutServiceResult[] = [];
    for (const [index, { service, queue, ledgerKey, pool }] of services.entries()) {
      const hash = await ledger.hgetall(ledgerKey);
      results.push({
        service,
        ledger: new Map(Object.entries(hash).map(([id, count]) => [id, Number(count)])),
        kill: killLines[index],
        duplicatesAcked: pool.stats().duplicatesAcked,
        depths: { queue: await queues.depth(queue.url), dlq: await queues.depth(queue.dlqUrl!) },
      });
    }
    return {
      eventIds: events.map((event) => event.id),
      services: results,
      messagesSentPerQueue,
      crashes: pools.flatMap((pool) => pool.crashes),
    };
  } catch (error) {
    const tail = pools.flatMap((pool) => pool.output.slice(-20)).join('\n');
    (error as Error).message += `\n\nLast worker output:\n${tail}`;
    throw error;
  } finally {
    for (const pool of pools) pool.killAll();
    ledgerClient?.disconnect();
    await queues.deleteAll();
    await Promise.all(servers.map((server) => server.stop()));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
