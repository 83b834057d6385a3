import { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { IdempotencyStoreUnavailableError } from '../../lib';
import { OrdersAppModule, OrdersAppOptions } from '../orders/orders-app.module';
import { Warehouse } from '../orders/warehouse.service';
import { DeliveryStats } from './delivery-stats';
import { DeliveryStatsInterceptor } from './delivery-stats.interceptor';
import { parseDemoOptions } from './demo-options';
import { DemoProducer, planOrders } from './demo-producer';
import { createDemoQueues, queueDepth } from './demo-queues';
import { DemoSnapshot, progressLine, summaryTable, verdict } from './demo-report';
import { createDemoStores } from './idempotency-store.factory';

/**
 * The demo behind `npm start`: an orders service on SQS, a burst of orders with every kind of
 * duplicate, and a check that each order shipped exactly once. Resolves the exit code: 0 when it
 * did, 1 when an order shipped twice or never, 2 when the demo could not run.
 */
export async function runDemo(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  embeddedEndpoint?: string,
  print: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  let options;
  try {
    options = parseDemoOptions(argv, env, embeddedEndpoint);
  } catch (error) {
    print((error as Error).message);
    return 2;
  }
  const runId = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
  const clientConfig: SQSClientConfig = { region: options.region };
  if (options.endpoint) {
    clientConfig.endpoint = options.endpoint;
    // Emulators accept any credentials; real ones from the environment still win.
    if (!env.AWS_ACCESS_KEY_ID) clientConfig.credentials = { accessKeyId: 'demo', secretAccessKey: 'demo' };
  }
  const client = new SQSClient(clientConfig);
  const where = options.embedded
    ? `embedded fauxqs at ${options.endpoint}`
    : options.endpoint
      ? `SQS at ${options.endpoint}`
      : `Amazon SQS (${options.region})`;

  const apps: INestApplicationContext[] = [];
  let center: INestApplication | undefined;
  let cleanup: Array<() => Promise<unknown>> = [];
  try {
    const queues = await createDemoQueues(client, runId, options.visibilityTimeout);
    cleanup.push(() => queues.delete());
    const stores = await createDemoStores(options.redisUrl, runId);
    cleanup.push(() => stores.close());
    print(
      `\n  nestjs-idempotent-sqs demo: ${options.orders} orders, ${options.workers} worker(s), ` +
        `${options.unsafe ? 'handler WITHOUT @Idempotent()' : 'idempotent handler'}\n` +
        `  queue: ${where}, visibility timeout ${options.visibilityTimeout} s, DLQ after 5 receives\n` +
        `  store: ${stores.description}\n`,
    );

    const plans = planOrders(options.orders, runId, options.seed);
    const warehouse = new Warehouse();
    for (const [n, plan] of plans.entries()) {
      warehouse.plan(plan.body.orderId, {
        // Slow orders outlast the visibility timeout: SQS hands them to another worker meanwhile.
        latencyMs: plan.slow ? options.visibilityTimeout * 1500 : 5 + ((n * 7) % 25),
        transientFailures: plan.transientFailure ? 1 : 0,
      });
    }
    const stats = new DeliveryStats();
    for (let index = 0; index < options.workers; index++) {
      const app = await NestFactory.createApplicationContext(
        OrdersAppModule.forRoot({
          queueUrl: queues.url,
          client: clientConfig,
          store: stores.forWorker(index),
          statsStore: stores.stats,
          keyPrefix: `demo-${runId}`,
          warehouse,
          visibilityTimeout: options.visibilityTimeout,
          unsafe: options.unsafe,
          providers: [
            { provide: DeliveryStats, useValue: stats },
            { provide: APP_INTERCEPTOR, useClass: DeliveryStatsInterceptor },
          ],
        }),
        { logger: options.verbose ? undefined : false },
      );
      apps.push(app);
    }

    if (options.centerPort !== undefined) {
      center = await serveCenter(options.centerPort, {
        queueUrl: queues.url,
        client: clientConfig,
        // A store of its own (on Redis, its own connection): a store closes with the app that started it,
        // and the Center outlives the workers.
        store: stores.forWorker(options.workers),
        statsStore: stores.stats,
        keyPrefix: `demo-${runId}`,
        warehouse,
        visibilityTimeout: options.visibilityTimeout,
        unsafe: options.unsafe,
      });
      print(`  Idempotency Center: ${await centerUrl(center)}/idempotency/ui?refresh=1\n`);
    }

    const producer = new DemoProducer(client, queues.url);
    const started = performance.now();
    const snapshot = async (): Promise<DemoSnapshot> => ({
      elapsedMs: performance.now() - started,
      orders: options.orders,
      shippedOrders: warehouse.shippedOrders,
      producer,
      stats,
      onQueue: await queueDepth(client, queues.url),
    });

    await producer.sendBurst(plans);
    // The producer retries a while later, as a client whose first call timed out would.
    const retrying = new Promise((resolve) =>
      setTimeout(resolve, options.visibilityTimeout * 1000 + 300),
    ).then(() => producer.sendRetries(plans));
    let retriesSent = false;
    void retrying.then(() => (retriesSent = true));

    const deadline = started + options.timeoutMs;
    let quietChecks = 0;
    let lastPrint = 0;
    let lastCounts = '';
    let current = await snapshot();
    const show = () => {
      const line = progressLine(current);
      const counts = line.slice(line.indexOf('sent'));
      if (counts !== lastCounts) print(line);
      lastPrint = current.elapsedMs;
      lastCounts = counts;
    };
    while (performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = await snapshot();
      if (current.elapsedMs - lastPrint >= 500) show();
      // Done once everything was sent, every order shipped and nothing is left on the queue (twice
      // in a row: the counts of a real SQS are approximate).
      const settled = retriesSent && current.shippedOrders === options.orders && current.onQueue === 0;
      quietChecks = settled ? quietChecks + 1 : 0;
      if (quietChecks >= 2) break;
    }
    const timedOut = quietChecks < 2;
    await retrying;
    await Promise.all(apps.splice(0).map((app) => app.close()));
    const deadLettered = await queueDepth(client, queues.dlqUrl);
    show();
    print('');
    print(summaryTable(current, deadLettered, options.unsafe));
    const result = verdict(
      options.orders,
      (orderId) => warehouse.shipmentsOf(orderId),
      current.elapsedMs,
      timedOut,
    );
    print(result.line);
    if (options.unsafe && !result.ok) {
      print('  (expected without @Idempotent(): at-least-once delivery alone ships duplicates)');
    }
    print('');
    if (center && options.centerHoldMs > 0) {
      print(
        `  The Idempotency Center stays up ${options.centerHoldMs / 1000} s: ${await centerUrl(center)}/idempotency/ui\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, options.centerHoldMs));
    }
    return result.ok && deadLettered === 0 && !timedOut ? 0 : 1;
  } catch (error) {
    print(`\n  The demo could not run: ${(error as Error).message}`);
    if (error instanceof IdempotencyStoreUnavailableError) {
      print('  Start Redis at that address, or run the demo without REDIS_URL (the in-memory store).');
    }
    return 2;
  } finally {
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    await center?.close().catch(() => undefined);
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    cleanup = [];
    client.destroy();
  }
}

/**
 * The Idempotency Center of the run: one more instance of the orders service that serves the page
 * over HTTP and does not consume; it reads the counters every worker shares.
 */
async function serveCenter(port: number, options: OrdersAppOptions): Promise<INestApplication> {
  const app = await NestFactory.create(
    OrdersAppModule.forRoot({ ...options, center: true, consume: false }),
    {
      logger: false,
    },
  );
  await app.listen(port, '127.0.0.1');
  return app;
}

async function centerUrl(app: INestApplication): Promise<string> {
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}
