import { Controller, Injectable } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { Test, TestingModule } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { IdempotencyModule, SqsBatchHandler, SqsEvent, SqsMessageHandler, SqsModule } from '../lib';
import { SqsRpcContext, SqsServer, SQS_TRANSPORT } from '../lib/microservices';
import { SqsQueueRegistry } from '../lib/sqs/nest/sqs-queue.registry';
import { SQS_QUEUE_REGISTRY_BINDING } from '../lib/sqs/sqs.constants';
import { FulfilmentService, orderPlaced, startFulfilmentService } from './fixtures/fulfilment.fixture';
import { CapturingLogger } from './support/capturing-logger';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';
import { usePollingHarness } from './support/polling-harness';

/**
 * SqsServer where an app strays from the happy path (test/sqs-server.e2e-spec.ts): no handler at all,
 * a type nothing matches, Nest's processing hooks, an `@SqsBatchHandler()` on a queue it polls, and
 * `SqsModule`'s handlers reaching a server that already listens.
 */

@SqsEvent('order_shipped')
class OrderShipped {
  @IsString() id!: string;
}

@SqsEvent('order_placed')
class PlacedEvent {
  @IsString() id!: string;
}

@SqsEvent('order_packed')
class OrderPacked {
  @IsString() id!: string;
}

const shipped: string[] = [];

@Injectable()
class ShippingHandlers {
  @SqsMessageHandler(OrderShipped)
  async onShipped(event: OrderShipped): Promise<void> {
    shipped.push(event.id);
  }
}

@Injectable()
class PackingHandlers {
  @SqsBatchHandler(OrderPacked)
  async onPacked(): Promise<void> {}
}

/** An @EventPattern() of a type `ShippingHandlers` serves too. */
@Controller()
class ShippedPatternController {
  @EventPattern('order_shipped')
  onShipped() {}
}

/**
 * An app with `SqsModule` and `providers`, initialised (its queue registry built), logging to `logs` (a
 * testing module sets Nest's one global logger: the server's lines keep going where the test reads them).
 */
async function sqsModuleApp(
  providers: Array<new () => unknown>,
  logs: CapturingLogger,
): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
    providers,
  })
    .setLogger(logs)
    .compile();
  return moduleRef.init();
}

describe('SqsServer beyond the happy path, on fauxqs', () => {
  const polling = usePollingHarness({ captureLogs: false });
  const { queues } = polling;

  afterEach(() => {
    shipped.length = 0;
  });

  /** The record line of a message, once logged. */
  const lineOf = (logs: CapturingLogger, messageId: string) =>
    waitFor(
      () => logs.lines.find((line) => line.message.includes(`messageId=${messageId}`))?.message,
      `the line of ${messageId}`,
    );

  /** Lets the app's `SqsModule` reach a server that already listens (Nest binds it before, as a rule). */
  const bindLate = (service: FulfilmentService, app: TestingModule) =>
    (service.server as unknown as Record<symbol, (registry: SqsQueueRegistry) => void>)[
      SQS_QUEUE_REGISTRY_BINDING
    ](app.get(SqsQueueRegistry));

  it('warns under its own name when it has no handler at all, and fails each message saying none listens', async () => {
    const queue = await queues.create('ms-bare');
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({ imports: [IdempotencyModule.forRoot({})] })
      .setLogger(logs)
      .compile();
    const microservice = moduleRef.createNestMicroservice({
      strategy: new SqsServer({
        queues: [{ name: 'orders', url: queue.url }],
        client: fauxqsClientConfig(),
        waitTimeSeconds: 1,
      }),
    });
    await polling.start(microservice.listen().then(() => microservice));
    expect(
      logs.lines
        .filter((line) => line.level === 'warn' && line.context === 'SqsServer')
        .map((line) => line.message),
    ).toEqual([
      'No @EventPattern() handler is registered (nor an @SqsMessageHandler() of SqsModule): every message will fail.',
    ]);
    const id = await queues.send(queue.url, { id: 'b1' });
    expect(await lineOf(logs, id)).toContain(
      'no @EventPattern() or @SqsMessageHandler() listens on queue \\"orders\\". It was not handled',
    );
  });

  it("does not warn where SqsModule's handlers serve one of its queues, and names a listener that fails", async () => {
    const [served, other] = [await queues.create('ms-served'), await queues.create('ms-other')];
    const logs = new CapturingLogger();
    @Injectable()
    class BoundShipping {
      @SqsMessageHandler(OrderShipped, { queue: 'shipments' })
      async onShipped(event: OrderShipped): Promise<void> {
        shipped.push(event.id);
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({ queues: [{ name: 'shipments' }] })],
      providers: [BoundShipping],
    })
      .setLogger(logs)
      .compile();
    const app = await polling.start(Promise.resolve(moduleRef.createNestApplication({ logger: logs })));
    const server = new SqsServer({
      // SqsModule's handler serves "shipments" only: "audit" has no handler, and still the server can succeed.
      queues: [
        { name: 'shipments', url: served.url },
        { name: 'audit', url: other.url },
      ],
      client: fauxqsClientConfig(),
      waitTimeSeconds: 1,
    });
    server.on('message_received', () => {
      throw new Error('the metrics sink is down');
    });
    app.connectMicroservice({ strategy: server });
    await app.startAllMicroservices();
    expect(logs.lines.filter((line) => line.message.includes('No @EventPattern() handler'))).toEqual([]);
    await queues.send(served.url, { type: 'order_shipped', id: 's9' });
    await waitFor(() => shipped.includes('s9'), 'the shipment');
    const [failed] = await waitFor(() => {
      const lines = logs.lines.filter((line) => line.message.includes('the metrics sink is down'));
      return lines.length > 0 ? lines : undefined;
    }, 'the listener failure');
    expect(failed).toMatchObject({
      level: 'error',
      context: 'SqsServer',
      message: "A listener of SqsServer's 'message_received' event failed: the metrics sink is down",
    });
  });

  it('names what it handles for a type nothing matches, with no @MessagePattern() hint', async () => {
    const queue = await queues.create('ms-unmatched');
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    expect(service.logs.lines.filter((line) => line.level === 'warn')).toEqual([]);
    const id = await queues.send(queue.url, { type: 'order_lost', id: 'u1' });
    const line = await lineOf(service.logs, id);
    expect(line).toContain(
      `no handler for event type \\"order_lost\\" on queue \\"orders\\" (handled: @EventPattern('order_placed')). It was not handled`,
    );
    expect(line).not.toContain('MessagePattern');
  });

  it("runs Nest's processing hooks around each handler call", async () => {
    const queue = await queues.create('ms-hooks');
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    const seen: string[] = [];
    service.server.setOnProcessingStartHook((transportId, context, done) => {
      seen.push(`start ${String(transportId === SQS_TRANSPORT)} ${(context as SqsRpcContext).messageId}`);
      return done();
    });
    service.server.setOnProcessingEndHook((transportId, context) => {
      seen.push(`end ${String(transportId === SQS_TRANSPORT)} ${(context as SqsRpcContext).messageId}`);
    });
    const id = await queues.send(queue.url, orderPlaced('h1'));
    await waitFor(() => seen.length === 2, 'both hooks');
    expect(seen).toEqual([`start true ${id}`, `end true ${id}`]);
    expect(service.log.fulfilled.map((call) => call.messageId)).toEqual([id]);
  });

  it('refuses to listen on a queue where SqsModule has an @SqsBatchHandler()', async () => {
    const queue = await queues.create('ms-batch');
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
      providers: [PackingHandlers],
    }).compile();
    const app = await polling.start(Promise.resolve(moduleRef.createNestApplication({ logger: false })));
    app.connectMicroservice({
      strategy: new SqsServer({ queues: [{ name: 'orders', url: queue.url }], client: fauxqsClientConfig() }),
    });
    await expect(app.startAllMicroservices()).rejects.toThrow(
      'SqsServer: queue "orders" has an @SqsBatchHandler(), which SqsServer does not run (its transport hands ' +
        "events one at a time). Consume that queue with SqsModule's polling (queues: [{ name, url }]) or " +
        'createSqsLambdaHandler(), and leave it out of SqsServer, or make the handler an @SqsMessageHandler().',
    );
  });

  it('refuses a type both kinds serve once, where it listens, when SqsModule is bound before (as Nest orders it)', async () => {
    const queue = await queues.create('ms-clash');
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
      controllers: [ShippedPatternController],
      providers: [ShippingHandlers],
    })
      .setLogger(logs)
      .compile();
    const app = await polling.start(Promise.resolve(moduleRef.createNestApplication({ logger: logs })));
    app.connectMicroservice({
      strategy: new SqsServer({ queues: [{ name: 'orders', url: queue.url }], client: fauxqsClientConfig() }),
    });
    await expect(app.startAllMicroservices()).rejects.toThrow(
      'SqsServer: event type(s) "order_shipped" on queue "orders" have both',
    );
    expect(logs.lines.filter((line) => line.message.includes('not bound'))).toEqual([]);
  });

  it("routes SqsModule's types at once when its binding comes after the server listens", async () => {
    const queue = await queues.create('ms-late');
    const service = await polling.start(
      startFulfilmentService({ queues: [{ name: 'orders', url: queue.url }] }),
    );
    const app = await polling.start(sqsModuleApp([ShippingHandlers], service.logs));
    bindLate(service, app);
    await queues.send(queue.url, { type: 'order_shipped', id: 's1' });
    const order = await queues.send(queue.url, orderPlaced('p1'));
    await waitFor(() => shipped.length === 1 && service.log.fulfilled.length === 1, 'both handlers');
    expect(shipped).toEqual(['s1']);
    expect(service.log.fulfilled.map((call) => call.messageId)).toEqual([order]);
    expect(await lineOf(service.logs, order)).toContain('status=OK');
  });

  it('names every type both kinds of handler serve, each with its queue', async () => {
    const queue = await queues.create('ms-clashes');
    const service = await polling.start(
      startFulfilmentService(
        { queues: [{ name: 'orders', url: queue.url }] },
        { controllers: [ShippedPatternController] },
      ),
    );
    @Injectable()
    class PlacedHandlers {
      @SqsMessageHandler(PlacedEvent)
      async onPlaced(): Promise<void> {}

      @SqsMessageHandler(OrderShipped)
      async onShipped(): Promise<void> {}
    }
    const app = await polling.start(sqsModuleApp([PlacedHandlers], service.logs));
    bindLate(service, app);
    const [refusal] = await waitFor(() => {
      const errors = service.logs.lines.filter(
        (line) => line.level === 'error' && line.context === 'SqsServer',
      );
      return errors.length > 0 ? errors : undefined;
    }, 'the refusal');
    expect(refusal.message).toBe(
      'SqsModule\'s handlers not bound: SqsServer: event type(s) "order_placed" on queue "orders", "order_shipped" ' +
        'on queue "orders" have both an @EventPattern() and an @SqsMessageHandler() handler; serve each type with ' +
        'one kind of handler.',
    );
  });
});
