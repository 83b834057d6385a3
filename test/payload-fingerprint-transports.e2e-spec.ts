import { Controller, INestMicroservice, UsePipes, ValidationPipe } from '@nestjs/common';
import { ClientProxy, ClientProxyFactory, EventPattern, Payload, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { Transform } from 'class-transformer';
import { IsString } from 'class-validator';
import { lastValueFrom } from 'rxjs';
import { Idempotent, IdempotencyModule, InMemoryIdempotencyStore } from '../lib';
import { IdempotencyStats } from '../lib/center';
import { SqsServer } from '../lib/microservices';
import { CapturingLogger } from './support/capturing-logger';
import { usePollingHarness } from './support/polling-harness';
import { requires } from './support/prerequisites';
import { fauxqsClientConfig, waitFor } from './support/sqs-queues';

/**
 * On `@EventPattern()` handlers (`SqsServer`'s, and those of Nest's other transports, context type
 * 'rpc'), a payload fingerprint hashes the data the transport hands the handler, as it arrived:
 * before the handler's pipes, which run after `@Idempotent()`'s interceptor. A `ValidationPipe` that
 * transforms the data into a class hiding its amount from JSON cannot make two prices one
 * fingerprint, and a copy whose keys come in another order is still a copy.
 */

/** A money type keeping its amount in a `#private` field: JSON writes it as `{}`. */
class Money {
  readonly #cents: number;
  constructor(cents: number) {
    this.#cents = cents;
  }
  get cents(): number {
    return this.#cents;
  }
}

class PriceSet {
  @IsString() id!: string;
  @Transform(({ value }) => new Money(value as number)) price!: Money;
}

const prices: Array<{ id: string; cents: number }> = [];

@Controller()
class PricesController {
  @EventPattern('price_set')
  @Idempotent({ fingerprint: true })
  @UsePipes(new ValidationPipe({ transform: true }))
  async onPrice(@Payload() event: PriceSet): Promise<void> {
    prices.push({ id: event.id, cents: event.price.cents });
  }
}

/** The handler's counters in the Idempotency Center's stats. */
async function countersOf(app: { get: INestMicroservice['get'] }): Promise<Record<string, number>> {
  const snapshot = await app.get(IdempotencyStats).snapshot();
  return snapshot.eventTypes.find((type) => type.eventType === 'price_set')?.handlers[0]?.counters ?? {};
}

beforeEach(() => (prices.length = 0));

requires('redis-server').describe("Nest's Redis transport ('rpc' context)", () => {
  let microservice: INestMicroservice;
  let client: ClientProxy;
  afterEach(async () => {
    await client?.close();
    await microservice?.close();
  });

  it('hashes the data before the pipes: another price under the key is a mismatch, a reordered copy a duplicate', async () => {
    const url = new URL(process.env.REDIS_URL!);
    const options = { host: url.hostname, port: Number(url.port) };
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store: new InMemoryIdempotencyStore(), stats: {} })],
      controllers: [PricesController],
    })
      .setLogger(new CapturingLogger())
      .compile();
    microservice = moduleRef.createNestMicroservice({ transport: Transport.REDIS, options });
    await microservice.listen();
    client = ClientProxyFactory.create({ transport: Transport.REDIS, options });
    await client.connect();

    const emitted = async (data: object, settled: (counters: Record<string, number>) => boolean) => {
      await lastValueFrom(client.emit('price_set', data));
      await waitFor(async () => settled(await countersOf(microservice)), 'the event to be counted', 30_000);
    };
    await emitted({ id: 'r1', price: 1000 }, (counters) => counters.handled === 1);
    await emitted({ price: 1000, id: 'r1' }, (counters) => counters.duplicates_completed === 1);
    await emitted({ id: 'r1', price: 99999 }, (counters) => counters.fingerprint_mismatches === 1);
    expect(prices).toEqual([{ id: 'r1', cents: 1000 }]);
  });
});

describe('SqsServer (@EventPattern() on SQS)', () => {
  const polling = usePollingHarness({ captureLogs: false });
  const { queues } = polling;

  it('hashes the decoded body before the pipes: another price reaches the DLQ, a reordered copy is acked', async () => {
    const queue = await queues.create('fp-server', { visibilityTimeout: 1, maxReceiveCount: 1 });
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store: new InMemoryIdempotencyStore(), stats: {} })],
      controllers: [PricesController],
    })
      .setLogger(new CapturingLogger())
      .compile();
    const microservice = moduleRef.createNestMicroservice({
      strategy: new SqsServer({
        waitTimeSeconds: 1,
        client: fauxqsClientConfig(),
        queues: [{ name: 'prices', url: queue.url }],
      }),
    });
    await polling.start(microservice);
    await microservice.listen();

    await queues.send(queue.url, { type: 'price_set', id: 's1', price: 1000 });
    await waitFor(() => prices.length === 1, 'the first price', 30_000);
    await queues.send(queue.url, { price: 1000, type: 'price_set', id: 's1' });
    const otherId = await queues.send(queue.url, { type: 'price_set', id: 's1', price: 99999 });
    await waitFor(
      async () => (await queues.depth(queue.dlqUrl!)) === 1,
      'the other price in the DLQ',
      30_000,
    );
    await waitFor(async () => (await queues.depth(queue.url)) === 0, 'the queue drained', 30_000);
    expect((await queues.peek(queue.dlqUrl!))[0].MessageId).toBe(otherId);
    expect(prices).toEqual([{ id: 's1', cents: 1000 }]);
    expect(await countersOf(microservice)).toMatchObject({
      handled: 1,
      duplicates_completed: 1,
      fingerprint_mismatches: 1,
    });
  });
});
