import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyConfigurationError,
  IdempotencyModule,
  IdempotencyModuleOptions,
  IdempotentOptions,
  InMemoryIdempotencyStore,
  SqsConfigurationError,
  SqsDispatchOptions,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
  SqsModuleOptions,
  SqsQueueOptions,
} from '../lib';
import { IdempotencyCenterModule } from '../lib/center';
import { SqsServer } from '../lib/microservices';
import { DynamoDbIdempotencyStore } from '../lib/stores/dynamodb';
import { PostgresIdempotencyStore } from '../lib/stores/postgres';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { buildSqsEvent, buildSqsRecord, SqsTestClient } from '../lib/testing';
import type { SqsValidationOptions } from '../lib/types';
import { createTestApp } from './support/test-app';

/**
 * Options given as an instance of a settings class (#48): a common way to type configuration is a
 * class whose getters expose the values. Nest's module builder and the spreads copied own keys only,
 * and the checks saw none, so `IdempotencyModule.forRoot(new IdempotencySettings())` keyed by `id`
 * instead of the `eventId` its getter said, and acked `{ id: 'batch-7', eventId: 'e-2' }` as a
 * duplicate of `e-1`, its handler never run; a typo'd getter ran with the default. Now every entry
 * point reads what the instance exposes (fields, getters of its classes, methods), or refuses it
 * naming the option; methods of no option name are left alone.
 */

@SqsEvent('batch_item')
class BatchItem {
  @IsString() id!: string;
  @IsString() eventId!: string;
}

const first = { type: 'batch_item', id: 'batch-7', eventId: 'e-1' };
const second = { type: 'batch_item', id: 'batch-7', eventId: 'e-2' };

/** A handler of BatchItem with `@Idempotent(idempotent)`, and what it ran. */
function itemsHandler(idempotent?: IdempotentOptions) {
  const ran: string[] = [];
  @Injectable()
  class Items {
    @SqsMessageHandler(BatchItem)
    @Idempotent(idempotent)
    async onItem(event: BatchItem): Promise<void> {
      ran.push(event.eventId);
    }
  }
  return { Items, ran };
}

/** The settings class: its values in getters, beside methods that are no options. */
class IdempotencySettings implements IdempotencyModuleOptions {
  get keyPath(): string {
    return 'eventId';
  }
  get ttl(): number {
    return 60_000;
  }
  describe(): string {
    return `keyed by ${this.keyPath}`;
  }
  toJSON(): object {
    return { keyPath: this.keyPath };
  }
}

describe('options given as a settings class are read as the values it exposes', () => {
  it('IdempotencyModule.forRoot(new IdempotencySettings()): e-2 after e-1 under one id runs its handler', async () => {
    const { Items, ran } = itemsHandler();
    const app = await createTestApp({ idempotency: new IdempotencySettings(), providers: [Items] });
    try {
      expect((await app.sqs.send(first)).status).toBe('OK');
      expect((await app.sqs.send(second)).status).toBe('OK');
      expect((await app.sqs.send(second)).status).toBe('DUPLICATE');
      expect(ran).toEqual(['e-1', 'e-2']);
    } finally {
      await app.close();
    }
  });

  it('@Idempotent(new HandlerSettings()): a getter, and a method that uses its instance', async () => {
    class HandlerSettings implements IdempotentOptions {
      get keyPath(): string {
        return 'eventId';
      }
    }
    class KeyedSettings {
      readonly #prefix = 'item';
      key(event: BatchItem): string {
        return `${this.#prefix}:${event.eventId}`;
      }
    }
    for (const settings of [new HandlerSettings(), new KeyedSettings()]) {
      const { Items, ran } = itemsHandler(settings);
      const app = await createTestApp({ providers: [Items] });
      try {
        expect((await app.sqs.send(first)).status).toBe('OK');
        expect((await app.sqs.send(second)).status).toBe('OK');
        expect(ran).toEqual(['e-1', 'e-2']);
        if (settings instanceof KeyedSettings) {
          expect((await app.sqs.send(second)).result.key).toBe('item:e-2');
        }
      } finally {
        await app.close();
      }
    }
  });

  it('IdempotencyModule.forRootAsync: a settings class from the factory, read as forRoot reads it', async () => {
    const { Items, ran } = itemsHandler();
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRootAsync({ useFactory: () => new IdempotencySettings() }),
        SqsModule.forRoot(),
      ],
      providers: [Items],
    }).compile();
    await moduleRef.init();
    const sqs = new SqsTestClient(moduleRef);
    expect((await sqs.send(first)).status).toBe('OK');
    expect((await sqs.send(second)).status).toBe('OK');
    expect(ran).toEqual(['e-1', 'e-2']);
    await moduleRef.close();
  });

  /** Routed by `kind`, not `type`: a record is OK only if the discriminator option reached the queue. */
  const byKind = { kind: 'batch_item', id: 'batch-7', eventId: 'e-1' };
  class ByKind implements SqsDispatchOptions {
    get discriminator(): { field: string } {
      return { field: 'kind' };
    }
  }

  it('SqsModule.forRoot and forRootAsync: a settings class, its queues and its nested options', async () => {
    class Unvalidated implements SqsValidationOptions {
      get validate(): boolean {
        return false;
      }
    }
    class SqsSettings extends ByKind implements SqsModuleOptions {
      get validation(): SqsValidationOptions {
        return new Unvalidated();
      }
    }
    class Billing extends ByKind implements SqsQueueOptions {
      get name(): string {
        return 'billing';
      }
      get fifo(): boolean {
        return true; // its name does not say so
      }
    }
    const { Items, ran } = itemsHandler();
    for (const sqs of [
      SqsModule.forRoot(new SqsSettings()),
      SqsModule.forRootAsync({ useFactory: () => new SqsSettings() }),
    ]) {
      const moduleRef = await Test.createTestingModule({
        imports: [IdempotencyModule.forRoot(), sqs],
        providers: [Items],
      }).compile();
      await moduleRef.init();
      // validate: false, read from a nested class: a body its class would refuse (eventId a number) passes.
      const client = new SqsTestClient(moduleRef);
      expect((await client.send({ ...byKind, id: `${ran.length}`, eventId: 5 })).status).toBe('OK');
      await moduleRef.close();
    }
    const app = await createTestApp({ sqs: { queues: [new Billing()] }, providers: [Items] });
    try {
      // fifo: true from the queue's getter, else a record with a group is refused for this queue.
      const { status } = await app.sqs.send(byKind, { queue: 'billing', groupId: 'g1' });
      expect(status).toBe('OK');
    } finally {
      await app.close();
    }
  });

  it('createSqsLambdaHandler and SqsTestClient: settings classes', async () => {
    const { Items, ran } = itemsHandler();
    @Module({ imports: [IdempotencyModule.forRoot(), SqsModule.forRoot()], providers: [Items] })
    class ItemsApp {}
    class LambdaSettings extends ByKind {
      get nestOptions() {
        return { logger: false as const };
      }
    }
    const handler = createSqsLambdaHandler(ItemsApp, new LambdaSettings());
    try {
      expect(await handler(buildSqsEvent([buildSqsRecord(byKind)]))).toEqual({ batchItemFailures: [] });
      expect(ran).toEqual(['e-1']);
      class ClientSettings extends ByKind {
        get defaultQueue(): string {
          return 'items';
        }
      }
      const client = new SqsTestClient(await handler.getApp(), new ClientSettings());
      const sent = await client.send({ ...byKind, id: 'batch-8' });
      expect(sent.status).toBe('OK');
      expect(sent.record.eventSourceARN).toMatch(/:items$/);
    } finally {
      await handler.close();
    }
  });
});

describe('a settings class is refused, naming the option, where a literal would be', () => {
  /** A class whose getter `name` returns a value: a typo, as `kepPath` is in a literal. */
  function getter(name: string, value: unknown): never {
    const Settings = class {};
    Object.defineProperty(Settings.prototype, name, { get: () => value, configurable: true });
    Object.defineProperty(Settings, 'name', { value: 'Settings' });
    return new Settings() as never;
  }

  it.each<[string, () => unknown, RegExp]>([
    [
      'IdempotencyModule.forRoot',
      () => IdempotencyModule.forRoot(getter('kepPath', 'eventId')),
      /^IdempotencyModule\.forRoot\(\): unknown option "kepPath" \(of Settings\); did you mean "keyPath"\?/,
    ],
    [
      '@Idempotent',
      () => itemsHandler(getter('inProgressTTL', 1000)),
      /^@Idempotent\(\) on Items\.onItem: unknown option "inProgressTTL" \(of Settings\); did you mean "inProgressTtl"\?/,
    ],
    [
      'SqsModule.forRoot',
      () => SqsModule.forRoot(getter('concurency', 5)),
      /^SqsModule\.forRoot\(\): unknown option "concurency" \(of Settings\); did you mean "concurrency"\?/,
    ],
    [
      'a queue of SqsModule',
      () => SqsModule.forRoot({ queues: [getter('visiblityTimeout', 30)] }),
      /^SqsModule\.forRoot\(\): queues\[0\]: unknown option "visiblityTimeout" \(of Settings\); did you mean "visibilityTimeout"\?/,
    ],
    [
      "SqsModule's recordLog",
      () => SqsModule.forRoot({ recordLog: getter('hashkeys', true) }),
      /^SqsModule\.forRoot\(\): recordLog: unknown option "hashkeys" \(of Settings\); did you mean "hashKeys"\?/,
    ],
    [
      "SqsModule's producer",
      () => SqsModule.forRoot({ producer: getter('maxAttempt', 2) }),
      /^SqsModule\.forRoot\(\): producer: unknown option "maxAttempt" \(of Settings\); did you mean "maxAttempts"\?/,
    ],
    [
      'createSqsLambdaHandler',
      () => createSqsLambdaHandler(class {}, getter('queu', 'orders')),
      /^createSqsLambdaHandler\(\) options: unknown option "queu" \(of Settings\); did you mean "queue"\?/,
    ],
    [
      'SqsServer',
      () => new SqsServer(getter('queue', [{ name: 'orders', url: 'https://q/orders' }])),
      /^SqsServer options: unknown option "queue" \(of Settings\); did you mean "queues"\?/,
    ],
    [
      'SqsTestClient',
      () => new SqsTestClient({ get: () => ({}) } as never, getter('defaultQueu', 'q')),
      /^SqsTestClient options: unknown option "defaultQueu" \(of Settings\); did you mean "defaultQueue"\?/,
    ],
    [
      '@SqsMessageHandler',
      () => {
        class Handlers {
          @SqsMessageHandler(BatchItem, getter('queu', 'orders'))
          onItem(): void {}
        }
        return Handlers;
      },
      /^@SqsMessageHandler\(BatchItem\) on Handlers\.onItem: unknown option "queu" \(of Settings\); did you mean "queue"\?/,
    ],
    [
      '@SqsEvent',
      () => SqsEvent('x', getter('decodr', 'text')),
      /^@SqsEvent\(\) options: unknown option "decodr" \(of Settings\); did you mean "decoder"\?/,
    ],
    [
      'IdempotencyCenterModule.forRoot',
      () => IdempotencyCenterModule.forRoot(getter('allowAnonymus', true)),
      /^IdempotencyCenterModule\.forRoot\(\): unknown option "allowAnonymus" \(of Settings\); did you mean "allowAnonymous"\?/,
    ],
    [
      'InMemoryIdempotencyStore',
      () => new InMemoryIdempotencyStore(getter('maxKey', 5)),
      /^InMemoryIdempotencyStore options: unknown option "maxKey" \(of Settings\); did you mean "maxKeys"\?/,
    ],
    [
      'RedisIdempotencyStore',
      () => new RedisIdempotencyStore('redis://127.0.0.1:1', getter('compactkeys', true)),
      /^RedisIdempotencyStore options: unknown option "compactkeys" \(of Settings\); did you mean "compactKeys"\?/,
    ],
    [
      'PostgresIdempotencyStore',
      () => new PostgresIdempotencyStore('postgres://127.0.0.1/x', getter('tabel', 'keys')),
      /^PostgresIdempotencyStore options: unknown option "tabel" \(of Settings\); did you mean "table"\?/,
    ],
    [
      'DynamoDbIdempotencyStore',
      () => new DynamoDbIdempotencyStore(getter('tablename', 'keys')),
      /^DynamoDbIdempotencyStore options: unknown option "tablename" \(of Settings\); did you mean "tableName"\?/,
    ],
  ])('%s', (_, make, message) => {
    expect(make).toThrow(message);
    let thrown: unknown;
    try {
      make();
    } catch (error) {
      thrown = error;
    }
    expect(
      [IdempotencyConfigurationError, SqsConfigurationError].some((type) => thrown instanceof type),
    ).toBe(true);
    expect((thrown as { code?: string }).code).toMatch(/^(IDEMPOTENCY|SQS)_CONFIGURATION$/);
  });

  it('reads the values of a store settings class (a value out of range is refused, naming it)', () => {
    expect(() => new InMemoryIdempotencyStore(getter('maxKeys', 0))).toThrow(
      'InMemoryIdempotencyStore: maxKeys must be a positive integer or Infinity, got 0',
    );
    expect(
      () => new RedisIdempotencyStore('redis://127.0.0.1:1', getter('serverCheck', 'sometimes')),
    ).toThrow("RedisIdempotencyStore: serverCheck must be 'warn', 'fail' or 'off', got sometimes.");
    expect(() => new PostgresIdempotencyStore('postgres://127.0.0.1/x', getter('table', ''))).toThrow(
      'PostgresIdempotencyStore: the table name must be a non-empty string, got .',
    );
    expect(() => new DynamoDbIdempotencyStore(getter('tableName', 'keys'))).not.toThrow();
  });

  it('a getter that throws is named, and one of no option name is never called', async () => {
    class Broken extends IdempotencySettings {
      override get ttl(): number {
        throw new Error('IDEMPOTENCY_TTL is not set');
      }
    }
    expect(() => IdempotencyModule.forRoot(new Broken())).toThrow(
      new IdempotencyConfigurationError(
        'IdempotencyModule.forRoot(): reading ttl threw: IDEMPOTENCY_TTL is not set',
      ),
    );
    class Lazy extends IdempotencySettings {
      get connection(): never {
        throw new Error('not connected');
      }
    }
    expect(() => IdempotencyModule.forRoot(new Lazy())).toThrow(
      /^IdempotencyModule\.forRoot\(\): unknown option "connection" \(of Lazy\); did you mean/,
    );
    // Through forRootAsync, at start-up.
    await expect(
      Test.createTestingModule({
        imports: [IdempotencyModule.forRootAsync({ useFactory: () => new Lazy() })],
      }).compile(),
    ).rejects.toThrow(/^IdempotencyModule options: unknown option "connection" \(of Lazy\)/);
  });
});
