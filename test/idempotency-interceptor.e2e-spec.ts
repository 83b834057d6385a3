import { Controller, Injectable, INestMicroservice, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import {
  BaseRpcContext,
  CustomTransportStrategy,
  EventPattern,
  Payload,
  Server,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { isObservable, lastValueFrom, of } from 'rxjs';
import {
  Idempotent,
  IdempotencyConfigurationError,
  IdempotencyInterceptor,
  IdempotencyModule,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { IdempotencyService } from '../lib/idempotency/idempotency.service';
import { IdempotentHandlerRegistry } from '../lib/idempotency/idempotent-handler.registry';
import { SqsTestClient } from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';
import { RecordingStore } from './support/recording-store';

/**
 * `IdempotencyInterceptor` itself: what it does for the calls it counts (those of a transport other
 * than the SQS hosts, context type `'rpc'`), used as a global interceptor, and built by hand.
 * The transport here is an in-process one: it hands each event to its handler with a context of
 * its own, which, like Nest's Redis or NATS contexts, carries no SQS message id, queue or receive
 * count.
 */

/** A Nest transport without a network: `deliver` hands an event to its handler as a transport would. */
class LocalTransport extends Server implements CustomTransportStrategy {
  listen(callback: () => void): void {
    callback();
  }
  close(): void {}
  on(): void {}
  unwrap<T>(): T {
    throw new Error('LocalTransport has no server to unwrap');
  }

  /** The handler's outcome: its value, or its error thrown. */
  async deliver(pattern: string, data: unknown): Promise<unknown> {
    const handler = this.getHandlerByPattern(pattern);
    if (handler === null) throw new Error(`no handler for ${pattern}`);
    const result: unknown = await handler(data, new BaseRpcContext([pattern]));
    return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined }) : result;
  }
}

@Controller()
class PaymentsController {
  runs: string[] = [];

  @EventPattern('payment_captured')
  @Idempotent()
  async onCaptured(@Payload() event: { id: string; fail?: boolean }): Promise<void> {
    this.runs.push(event.id);
    if (event.fail) throw new Error(`card declined for ${event.id}`);
  }

  @EventPattern('payment_noted')
  async onNoted(@Payload() event: { id: string }): Promise<void> {
    this.runs.push(`noted ${event.id}`);
  }
}

async function startMicroservice(
  providers: unknown[] = [],
): Promise<{ microservice: INestMicroservice; transport: LocalTransport; logs: CapturingLogger }> {
  const logs = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [IdempotencyModule.forRoot({ store: new RecordingStore(), stats: {} })],
    controllers: [PaymentsController],
    providers: providers as never[],
  })
    .setLogger(logs)
    .compile();
  const transport = new LocalTransport();
  const microservice = moduleRef.createNestMicroservice({ strategy: transport, logger: logs });
  await microservice.listen();
  return { microservice, transport, logs };
}

const idempotencyWarnings = (logs: CapturingLogger) =>
  logs.lines
    .filter((line) => line.level === 'warn' && line.context === 'Idempotency')
    .map((line) => line.message);

describe('IdempotencyInterceptor on another transport', () => {
  it("journals a call for the Center with its key, its duration, and no SQS message's fields", async () => {
    const { microservice, transport } = await startMicroservice();
    try {
      const before = performance.now();
      // Nest's exception filter answers the transport with its own error object.
      await expect(transport.deliver('payment_captured', { id: 'pay-7', fail: true })).rejects.toMatchObject({
        status: 'error',
      });
      const elapsed = performance.now() - before;
      const activity = await microservice.get(IdempotencyStats).activity();
      expect(activity.records).toEqual([
        {
          at: expect.any(String),
          status: 'FAILED',
          eventType: 'payment_captured',
          routed: true,
          // The key as it is: the record log's `hashKeys` belongs to the SQS hosts, not to this transport.
          key: 'pay-7',
          // No message id or queue to show (the journal leaves out the empty ones).
          receiveCount: 0,
          durationMs: expect.any(Number),
          reason: 'card declined for pay-7',
        },
      ]);
      // The time the call took, measured from its start (the journal keeps a tenth of a millisecond).
      const [{ durationMs }] = activity.records;
      expect(durationMs).toBeGreaterThanOrEqual(0);
      expect(durationMs).toBeLessThanOrEqual(elapsed + 0.1);
    } finally {
      await microservice.close();
    }
  });
});

@SqsEvent('shipment_booked')
class ShipmentBooked {
  @IsString() id!: string;
}

@Injectable()
class ShipmentHandlers {
  runs: string[] = [];

  @SqsMessageHandler(ShipmentBooked)
  async onBooked(event: ShipmentBooked): Promise<void> {
    this.runs.push(event.id);
  }
}

describe('IdempotencyInterceptor as a global interceptor (APP_INTERCEPTOR)', () => {
  const global = { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor };

  it('runs an @EventPattern() handler without @Idempotent() as it is, every call, and warns of nothing', async () => {
    const { microservice, transport, logs } = await startMicroservice([global]);
    try {
      await transport.deliver('payment_noted', { id: 'n1' });
      await transport.deliver('payment_noted', { id: 'n1' });
      // An @Idempotent() handler under both interceptors: the first claims, the second steps aside.
      await transport.deliver('payment_captured', { id: 'p1' });
      await transport.deliver('payment_captured', { id: 'p1' });
      expect(microservice.get(PaymentsController).runs).toEqual(['noted n1', 'noted n1', 'p1']);
      expect(idempotencyWarnings(logs)).toEqual([]);
    } finally {
      await microservice.close();
    }
  });

  it('runs an @SqsMessageHandler() without @Idempotent() as it is, every call, and warns of nothing', async () => {
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
      providers: [ShipmentHandlers, global],
    })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    try {
      const sqs = new SqsTestClient(moduleRef);
      expect((await sqs.send({ type: 'shipment_booked', id: 's1' })).status).toBe('OK');
      expect((await sqs.send({ type: 'shipment_booked', id: 's1' })).status).toBe('OK');
      expect(moduleRef.get(ShipmentHandlers).runs).toEqual(['s1', 's1']);
      expect(idempotencyWarnings(logs)).toEqual([]);
    } finally {
      await moduleRef.close();
    }
  });
});

describe('IdempotencyInterceptor built by hand', () => {
  let microservice: INestMicroservice;
  let registry: IdempotentHandlerRegistry;
  let service: IdempotencyService;

  beforeEach(async () => {
    ({ microservice } = await startMicroservice());
    registry = microservice.get(IdempotentHandlerRegistry);
    service = microservice.get(IdempotencyService);
  });
  afterEach(() => microservice.close());

  it('refuses to be built without the registry or the service of IdempotencyModule', () => {
    expect(() => new IdempotencyInterceptor(registry, undefined)).toThrow(IdempotencyConfigurationError);
    expect(() => new IdempotencyInterceptor(undefined, service)).toThrow(IdempotencyConfigurationError);
    expect(() => new IdempotencyInterceptor(undefined, undefined)).toThrow(/needs IdempotencyModule/);
  });

  it('shares claims only with an interceptor of the same registry and service', () => {
    const interceptor = new IdempotencyInterceptor(registry, service);
    expect(interceptor.sharesClaimsWith(microservice.get(IdempotencyInterceptor))).toBe(true);
    expect(interceptor.sharesClaimsWith(new IdempotencyInterceptor(registry, service))).toBe(true);
    const otherRegistry = Object.create(IdempotentHandlerRegistry.prototype) as IdempotentHandlerRegistry;
    const otherService = Object.create(IdempotencyService.prototype) as IdempotencyService;
    expect(interceptor.sharesClaimsWith(new IdempotencyInterceptor(otherRegistry, service))).toBe(false);
    expect(interceptor.sharesClaimsWith(new IdempotencyInterceptor(registry, otherService))).toBe(false);
    // Something that only looks like one claims nowhere the interceptor knows of.
    expect(interceptor.sharesClaimsWith({ registry, idempotency: service })).toBe(false);
  });

  it("without the app's RecordObservers, claims a call of another transport and counts nothing", async () => {
    const interceptor = new IdempotencyInterceptor(registry, service);
    const controller = microservice.get(PaymentsController);
    // A context of its own for each delivery, as a transport makes.
    const call = () => {
      const context = new ExecutionContextHost(
        [{ id: 'pay-9' }, new BaseRpcContext(['payment_captured'])],
        PaymentsController,
        controller.onCaptured,
      );
      context.setType('rpc');
      return lastValueFrom(interceptor.intercept(context, { handle: () => of('done') }));
    };
    await expect(call()).resolves.toBe('done');
    // The second call is a duplicate of the completed first: the handler's observable is not asked.
    await expect(call()).resolves.toBeUndefined();
    const snapshot = await microservice.get(IdempotencyStats).snapshot();
    const type = snapshot.eventTypes.find((entry) => entry.eventType === 'payment_captured')!;
    expect(type.totals.handled + type.totals.duplicates_completed).toBe(0);
  });
});

@SqsEvent('parcel_sent')
class ParcelSent {
  @IsString() id!: string;
}

describe('IdempotentHandlerRegistry at bootstrap', () => {
  it('says nothing of the methods a class-level @Idempotent() does not apply to', async () => {
    @Injectable()
    @Idempotent()
    class Parcels {
      @SqsMessageHandler(ParcelSent)
      async onSent(event: ParcelSent): Promise<void> {
        this.describe(event);
      }

      describe(event: ParcelSent): string {
        return `parcel ${event.id}`;
      }
    }
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
      providers: [Parcels],
    })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    try {
      expect((await new SqsTestClient(moduleRef).send({ type: 'parcel_sent', id: 'p1' })).status).toBe('OK');
      expect(idempotencyWarnings(logs)).toEqual([]);
    } finally {
      await moduleRef.close();
    }
  });

  it('takes one handler class provided by two modules for one handler, not two in one scope', async () => {
    @Injectable()
    class Parcels {
      runs = 0;
      @SqsMessageHandler(ParcelSent)
      @Idempotent()
      async onSent(): Promise<void> {
        this.runs++;
      }
    }
    @Module({ providers: [Parcels] })
    class SendingModule {}
    @Module({ providers: [Parcels] })
    class TrackingModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({}), SendingModule, TrackingModule],
    })
      .setLogger(new CapturingLogger())
      .compile();
    await moduleRef.init();
    try {
      expect((await new SqsTestClient(moduleRef).send({ type: 'parcel_sent', id: 'p1' })).status).toBe('OK');
    } finally {
      await moduleRef.close();
    }
  });
});
