import { SQSClientConfig } from '@aws-sdk/client-sqs';
import { Redis } from 'ioredis';
import { RedisServerHandle, startRedisServer } from '../support/redis-server';
import { TestQueues, waitFor } from '../support/sqs-queues';
import { chaosEventBody } from './chaos-event';
import { WorkerPool } from './worker-pool';

/** What the misconfigured run did. */
export interface ShortLeaseResult {
  /** Ledger: event id → times its effect was applied. */
  ledger: Map<string, number>;
  /** The workers' `Lost the claim on ...` warnings. */
  lostClaimLogs: string[];
}

/**
 * The documented failure mode, on purpose: the heartbeat off and a lease (1 s) shorter than the
 * handler (3 s), with a 1 s visibility timeout. SQS redelivers the event while it runs, the lease
 * has expired by then, so the second worker claims it too and both apply the effect; the one that
 * completes last finds the key no longer its own and logs the lost claim. This is why
 * `inProgressTtl` must exceed the worst-case handler time (or `heartbeat: true`).
 */
export async function runShortLease(sqsConfig: SQSClientConfig): Promise<ShortLeaseResult> {
  const runId = `lease${Date.now().toString(36)}`;
  const queues = new TestQueues(sqsConfig);
  let server: RedisServerHandle | undefined;
  let pool: WorkerPool | undefined;
  let ledger: Redis | undefined;
  try {
    server = await startRedisServer();
    const client = (ledger = new Redis(server.url));
    const ledgerKey = `${runId}:ledger`;
    const queue = await queues.create('short-lease', { visibilityTimeout: 1 });
    const workers = (pool = new WorkerPool(
      {
        queueUrl: queue.url,
        sqsEndpoint: String(sqsConfig.endpoint),
        storeUrl: server.url,
        ledgerUrl: server.url,
        ledgerKey,
        keyPrefix: runId,
        service: 'chaos',
        visibilityTimeout: 1,
        inProgressTtl: 1_000,
        heartbeat: false,
        failureRate: 0,
      },
      1,
      2,
    ));
    await workers.start();
    // One event: one worker takes it, the other is free to take the redelivery a second later (with
    // several, each worker could be busy with its own when the redeliveries come).
    await queues.send(queue.url, chaosEventBody({ id: `${runId}-e0`, workMs: 3_000 }));
    const lostClaims = () => workers.output.filter((line) => line.includes('Lost the claim on'));
    await waitFor(
      async () => {
        const counts = Object.values(await client.hgetall(ledgerKey)).map(Number);
        return counts.some((count) => count >= 2) && lostClaims().length > 0;
      },
      'a double application and its lost-claim warning',
      30_000,
      100,
    );
    const hash = await client.hgetall(ledgerKey);
    return {
      ledger: new Map(Object.entries(hash).map(([id, count]) => [id, Number(count)])),
      lostClaimLogs: lostClaims(),
    };
  } catch (error) {
    if (pool) (error as Error).message += `\n\nWorker output:\n${pool.output.slice(-40).join('\n')}`;
    throw error;
  } finally {
    pool?.killAll();
    ledger?.disconnect();
    await queues.deleteAll();
    await server?.stop();
  }
}
