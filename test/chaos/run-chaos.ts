import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
  SQSClientConfig,
} from '@aws-sdk/client-sqs';
import { Redis } from 'ioredis';
import { writeFileSync } from 'node:fs';
import { RedisServerHandle, startRedisServer } from '../support/redis-server';
import { TestQueues } from '../support/sqs-queues';
import { ChaosPlan, planChaos } from './chaos-plan';
import { ChaosProducer, CopyKind, ProducerCounts } from './chaos-producer';
import { LateRetries } from './late-retries';
import type { ChaosProfile } from './chaos-profile';
import type { ChaosWorkerStats } from './chaos-worker.config';
import { WorkerPool } from './worker-pool';

/** Everything a chaos run did and saw, for the spec to check and print. */
export interface ChaosRunResult {
  profile: ChaosProfile;
  plan: ChaosPlan;
  sent: ProducerCounts;
  workers: ChaosWorkerStats;
  processesStarted: number;
  /** The kill line of each SIGKILL (names the worker and its handlers in flight). */
  kills: string[];
  pause: { ms: number } | undefined;
  /** Ledger: event id → times its effect was applied. */
  ledger: Map<string, number>;
  /** Bodies found in the dead-letter queue. */
  deadLettered: string[];
  /** Queue depth (visible + in flight + delayed) at the final checks, each > 500 ms apart. */
  finalDepths: number[];
  lostClaimLogs: number;
  /** What the controller did when, in seconds from the start. */
  timeline: string[];
  crashes: string[];
  output: string[];
  elapsedMs: number;
}

type Step = 'kill' | 'pause';

/**
 * One chaos run: a store Redis and a ledger Redis of its own, a queue with a DLQ on the fauxqs of
 * the test run, `profile.workers` worker processes, the producer, and the chaos (kills and one
 * store pause) interleaved with the producer's waves so that each strikes while work is in flight.
 * Ends when every event is applied, every poison message dead-lettered and the queue is drained.
 */
export async function runChaos(profile: ChaosProfile, sqsConfig: SQSClientConfig): Promise<ChaosRunResult> {
  const started = performance.now();
  const runId = `chaos${Date.now().toString(36)}`;
  const plan = planChaos(profile, runId);
  const timeline: string[] = [];
  const mark = (what: string) => {
    const line = `${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${what}`;
    timeline.push(line);
    pool?.output.push(`[controller] ${line}`);
  };
  const queues = new TestQueues(sqsConfig);
  const servers: RedisServerHandle[] = [];
  let pool: WorkerPool | undefined;
  let ledgerClient: Redis | undefined;
  let storeServer: RedisServerHandle | undefined;
  let paused = false;
  let lateRetries: LateRetries | undefined;
  try {
    storeServer = await startRedisServer();
    servers.push(storeServer);
    const ledgerServer = await startRedisServer();
    servers.push(ledgerServer);
    const ledger = (ledgerClient = new Redis(ledgerServer.url));
    const ledgerKey = `${runId}:ledger`;
    const queue = await queues.create('chaos', {
      visibilityTimeout: profile.visibilityTimeout,
      maxReceiveCount: profile.maxReceiveCount,
    });
    pool = new WorkerPool(
      {
        queueUrl: queue.url,
        sqsEndpoint: String(sqsConfig.endpoint),
        storeUrl: storeServer.url,
        ledgerUrl: ledgerServer.url,
        ledgerKey,
        keyPrefix: runId,
        service: 'chaos',
        visibilityTimeout: profile.visibilityTimeout,
        inProgressTtl: profile.inProgressTtl,
        heartbeat: false,
        failureRate: profile.failureRate,
      },
      profile.seed,
      profile.workers,
    );
    await pool.start();
    mark('workers ready');
    const workers = pool;
    // From the moment the workers are ready: their start-up (ts-node compiling the library) is not the run.
    const deadline = performance.now() + profile.timeoutMs;
    const producer = new ChaosProducer(queues.client, queue.url);
    const applied = () => ledger.hlen(ledgerKey);
    const until = async (condition: () => Promise<boolean>, what: string) => {
      while (!(await condition())) {
        if (workers.crashes.length > 0) throw new Error(`worker crashed: ${workers.crashes.join('; ')}`);
        if (performance.now() > deadline) throw new Error(`chaos run timed out waiting for ${what}`);
        await sleep(100);
      }
    };

    // Poison first: they need maxReceiveCount receives to reach the DLQ.
    await producer.send(plan.poison.map(({ body }) => ({ body, kind: 'poison' as const })));

    // Late retries go out once their first copy is applied, in the background of the waves.
    lateRetries = new LateRetries(ledger, ledgerKey, producer);

    const steps: Step[] = [
      ...Array<Step>(Math.ceil(profile.kills / 2)).fill('kill'),
      'pause',
      ...Array<Step>(Math.floor(profile.kills / 2)).fill('kill'),
    ];
    const waveSize = Math.ceil(plan.events.length / (steps.length + 1));
    const kills: string[] = [];
    let pause: ChaosRunResult['pause'];
    let sentEvents = 0;
    let nextSlot = 0;
    for (let wave = 0; wave <= steps.length; wave++) {
      const events = plan.events.slice(wave * waveSize, (wave + 1) * waveSize);
      const messages: Array<{ body: string; kind: CopyKind }> = [];
      for (const event of events) {
        if (event.burst) continue;
        messages.push({ body: event.body, kind: 'firstCopies' });
        if (event.retry === 'in-flight') messages.push({ body: event.body, kind: 'inFlightRetries' });
      }
      const burst = events.filter((event) => event.burst);
      await Promise.all([
        producer.send(messages),
        ...burst.map((event) => producer.burst(event.body, profile.burstCopies)),
      ]);
      sentEvents += events.length;
      mark(`wave ${wave + 1} sent (${sentEvents} events)`);
      lateRetries.add(events.filter((event) => event.retry === 'late'));

      const step = steps[wave];
      if (step === undefined) break;
      // Strike once half of this wave is applied: the other half is still queued or in flight.
      const target = sentEvents - Math.floor(events.length / 2);
      await until(async () => (await applied()) >= target, `${target} events applied before the ${step}`);
      if (step === 'kill') {
        await until(async () => workers.readySlots().length > 0, 'a ready worker');
        const ready = workers.readySlots();
        const slot = ready.find((candidate) => candidate >= nextSlot) ?? ready[0];
        nextSlot = (slot + 1) % profile.workers;
        mark(`kill slot ${slot}`);
        kills.push(await workers.kill(slot));
        mark(`killed: ${kills[kills.length - 1]}`);
      } else {
        // A hung server, not a dead one: SIGSTOP keeps every key (a restarted no-persistence Redis
        // would have lost them all, and proven nothing). It lasts until records have failed closed
        // (the workers report it), within the profile's bounds.
        const failedBefore = workers.stats().storeErrors;
        mark('SIGSTOP store Redis');
        process.kill(storeServer.pid, 'SIGSTOP');
        paused = true;
        const pausedAt = performance.now();
        for (;;) {
          await sleep(100);
          const elapsed = performance.now() - pausedAt;
          if (elapsed >= profile.pause.maxMs) break;
          if (elapsed >= profile.pause.minMs && workers.stats().storeErrors > failedBefore) break;
        }
        process.kill(storeServer.pid, 'SIGCONT');
        paused = false;
        pause = { ms: Math.round(performance.now() - pausedAt) };
        mark(`SIGCONT store Redis (paused ${pause.ms} ms)`);
      }
    }

    await until(async () => (await applied()) === plan.events.length, 'every event to be applied');
    mark('every event applied');
    const late = lateRetries;
    await until(async () => (await late.flush()) === 0, 'the late retries to be sent');
    const poisonCount = plan.poison.length;
    await until(
      async () => (await queues.depth(queue.dlqUrl!)) >= poisonCount,
      `${poisonCount} poison messages in the DLQ`,
    );
    mark('poison dead-lettered');
    // Drained: nothing visible, in flight or delayed, at two checks in a row.
    const finalDepths: number[] = [];
    await until(async () => {
      const depth = await queues.depth(queue.url);
      finalDepths.push(depth);
      if (depth !== 0) return false;
      if (finalDepths.length < 2 || finalDepths[finalDepths.length - 2] !== 0) {
        await sleep(500);
        return false;
      }
      return true;
    }, 'the queue to drain');

    mark('drained');
    await workers.stop();
    const deadLettered = await receiveAll(queues.client, queue.dlqUrl!);
    const ledgerHash = await ledger.hgetall(ledgerKey);
    return {
      profile,
      plan,
      sent: producer.counts,
      workers: workers.stats(),
      processesStarted: workers.started,
      kills,
      pause,
      ledger: new Map(Object.entries(ledgerHash).map(([id, count]) => [id, Number(count)])),
      deadLettered,
      finalDepths: finalDepths.slice(-2),
      lostClaimLogs: workers.output.filter((line) => line.includes('Lost the claim on')).length,
      crashes: workers.crashes,
      timeline,
      output: workers.output,
      elapsedMs: performance.now() - started,
    };
  } catch (error) {
    if (pool) {
      const tail = pool.output.slice(-40).join('\n');
      (error as Error).message += `\n\nLast worker output:\n${tail}`;
    }
    throw error;
  } finally {
    if (process.env.CHAOS_LOG && pool) writeFileSync(process.env.CHAOS_LOG, pool.output.join('\n') + '\n');
    lateRetries?.close();
    if (paused && storeServer) process.kill(storeServer.pid, 'SIGCONT');
    pool?.killAll();
    ledgerClient?.disconnect();
    await queues.deleteAll();
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** Receives (and deletes) every message of a queue. */
async function receiveAll(client: SQSClient, url: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
      }),
    );
    if (Messages.length === 0) return bodies;
    bodies.push(...Messages.map((message) => message.Body ?? ''));
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: Messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle,
        })),
      }),
    );
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
