import { Controller, Injectable, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { AcquireResult } from '../lib/stores';
import { Counters, IdempotencyStats, IdempotencyStatsSnapshot } from '../lib/center';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyModule,
  SkipMessageException,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { SqsServer } from '../lib/microservices';
import { emptyCounters } from '../lib/idempotency/idempotency-counters';
import { SqsHandlerExplorer } from '../lib/sqs/nest/sqs-handler.explorer';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';
import { RecordingStore } from './support/recording-store';
import { fauxqsClientConfig, TestQueues, waitFor } from './support/sqs-queues';
import { PassThroughInterceptor } from './support/test-app';

/**
 * Every record is counted exactly once, whichever host hands it to the record pipeline (Lambda,
 * the polling consumers of `SqsModule`, `SqsServer`) and whichever path its handler takes (direct,
 * or Nest's interceptor pipeline): the pipeline counts its records in one place, and
 * `@Idempotent()` counts only the calls no SQS host counts (`SqsServer`'s own `@EventPattern()`
 * routes, as on any Nest transport). Each status moves its counter by one, under its handler (or
 * `'-'` when no handler ran), with and without `@Idempotent()`.
 */

@SqsEvent('tally_idempotent')
class IdempotentTally {
  @IsString() id!: string;
  @IsOptional() @IsIn(['skip', 'fail']) outcome?: string;
}

@SqsEvent('tally_plain')
class PlainTally {
  @IsString() id!: string;
  @IsOptional() @IsIn(['skip', 'fail']) outcome?: string;
}

/** Skips or fails as the event says; handles it otherwise. */
function act(event: { id: string; outcome?: string }): void {
  if (event.outcome === 'skip') throw new SkipMessageException(`skipping ${event.id}`);
  if (event.outcome === 'fail') throw new Error(`failing ${event.id}`);
}

@Injectable()
class TallyHandlers {
  @SqsMessageHandler(IdempotentTally)
  @Idempotent()
  onIdempotent(event: IdempotentTally): void {
    act(event);
  }

  @SqsMessageHandler(PlainTally)
  onPlain(event: PlainTally): void {
    act(event);
  }
}

/** `SqsServer`'s own routes: counted by `@Idempotent()` (and, without it, not at all). */
@Controller()
class TallyPatterns {
  @EventPattern('tally_pattern')
  @Idempotent()
  onPattern(@Payload() event: { id: string; outcome?: string }): void {
    act(event);
  }

  @EventPattern('tally_pattern_plain')
  onPlainPattern(@Payload() event: { id: string; outcome?: string }): void {
    act(event);
  }
}

/** In memory, but a key `busy` is always held by another attempt (an in-flight duplicate, without a race). */
class BusyKeyStore extends RecordingStore {
  override async tryAcquire(key: string, ttlMs: number, token: string): Promise<AcquireResult> {
    if (key.endsWith(':busy')) return AcquireResult.IN_PROGRESS;
    return super.tryAcquire(key, ttlMs, token);
  }
}

/** One of each status, per handler kind; the duplicates of `ok` go in a second round. */
const idempotent = (id: string, outcome?: string) => ({ type: 'tally_idempotent', id, outcome });
const plain = (id: string, outcome?: string) => ({ type: 'tally_plain', id, outcome });
const pattern = (id: string, outcome?: string) => ({ type: 'tally_pattern', id, outcome });
const FIRST_ROUND: unknown[] = [
  idempotent('ok'),
  idempotent('busy'),
  idempotent('skip', 'skip'),
  idempotent('fail', 'fail'),
  plain('ok'),
  plain('skip', 'skip'),
  plain('fail', 'fail'),
  { type: 'tally_plain' }, // fails validation: invalid, its type known
];
const SECOND_ROUND: unknown[] = [idempotent('ok')];
/** Also sent to `SqsServer`: its own routes. */
const PATTERN_FIRST_ROUND: unknown[] = [
  pattern('ok'),
  pattern('busy'),
  pattern('skip', 'skip'),
  pattern('fail', 'fail'),
  { type: 'tally_pattern_plain', id: 'ok' },
];
const PATTERN_SECOND_ROUND: unknown[] = [pattern('ok')];

const none: Counters = emptyCounters();
/** What one of each status leaves on an idempotent handler. */
const EVERY_IDEMPOTENT_STATUS: Counters = {
  ...none,
  handled: 1,
  duplicates_completed: 1,
  duplicates_in_flight: 1,
  skipped: 1,
  failed: 1,
};

/** The counters of each handler that has any, as `eventType handler`. */
function countersByHandler(snapshot: IdempotencyStatsSnapshot): Record<string, Counters> {
  const found: Record<string, Counters> = {};
  for (const type of snapshot.eventTypes) {
    for (const handler of type.handlers) {
      if (Object.values(handler.counters).some((value) => value > 0)) {
        found[`${type.eventType} ${handler.handler}`] = handler.counters;
      }
    }
  }
  return found;
}

/** The expectation every host shares: the `@SqsMessageHandler()` routes. */
const SQS_HANDLER_COUNTS: Record<string, Counters> = {
  'tally_idempotent TallyHandlers.onIdempotent': EVERY_IDEMPOTENT_STATUS,
  'tally_plain TallyHandlers.onPlain': { ...none, handled: 1, skipped: 1, failed: 1 },
  'tally_plain -': { ...none, invalid: 1 },
};

interface Host {
  /** Sends the bodies and resolves once each has been handled (logged). */
  deliver(bodies: unknown[]): Promise<void>;
  stats(): Promise<IdempotencyStats>;
  /** The path each `@SqsMessageHandler()` took. */
  paths(): Promise<Array<string | undefined>>;
  close(): Promise<void>;
}

const recordLines = (logs: CapturingLogger) => logs.lines.filter((line) => line.context === 'SqsRecord');

const pathsOf = (explorer: SqsHandlerExplorer) => explorer.getHandlers().map((handler) => handler.path);

const paths = [
  ['direct', false],
  ['nest', true],
] as const;

function appProviders(nestPipeline: boolean) {
  return [
    TallyHandlers,
    ...(nestPipeline ? [{ provide: APP_INTERCEPTOR, useClass: PassThroughInterceptor }] : []),
  ];
}

describe.each(paths)('every record is counted once (%s path)', (_path, nestPipeline) => {
  const queues = new TestQueues();
  let host: Host | undefined;

  afterEach(async () => {
    await host?.close();
    host = undefined;
  });
  afterAll(() => queues.deleteAll());

  async function run(first: unknown[], second: unknown[]): Promise<IdempotencyStatsSnapshot> {
    await host!.deliver(first);
    await host!.deliver(second);
    // The path this suite is about is the one the handlers took.
    expect(await host!.paths()).toEqual(nestPipeline ? ['nest', 'nest'] : ['direct', 'direct']);
    return (await host!.stats()).snapshot();
  }

  it('Lambda host', async () => {
    const logs = new CapturingLogger();
    @Module({
      imports: [IdempotencyModule.forRoot({ store: new BusyKeyStore(), stats: {} })],
      providers: appProviders(nestPipeline),
    })
    class LambdaApp {}
    const handler = createSqsLambdaHandler(LambdaApp, { nestOptions: { logger: logs } });
    host = {
      deliver: async (bodies) => {
        const before = recordLines(logs).length;
        await handler(
          buildSqsEvent(bodies.map((body) => buildSqsRecord(body, { queue: 'tally' }))),
          buildLambdaContext(),
        );
        expect(recordLines(logs).length - before).toBe(bodies.length);
      },
      stats: async () => (await handler.getApp()).get(IdempotencyStats),
      paths: async () => pathsOf((await handler.getApp()).get(SqsHandlerExplorer)),
      close: () => handler.close(),
    };
    const snapshot = await run([...FIRST_ROUND, 'not json'], SECOND_ROUND);
    expect(countersByHandler(snapshot)).toEqual({
      ...SQS_HANDLER_COUNTS,
      '(unknown) -': { ...none, invalid: 1 },
    });
    expect(snapshot.totals).toEqual({
      ...none,
      handled: 2,
      duplicates_completed: 1,
      duplicates_in_flight: 1,
      skipped: 2,
      failed: 2,
      invalid: 2,
    });
  });

  it('polling host (SqsModule)', async () => {
    // A long visibility timeout: failed records do not come back to be counted again.
    const queue = await queues.create('tally-polling', { visibilityTimeout: 60 });
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRoot({ store: new BusyKeyStore(), stats: {} }),
        SqsModule.forRoot({
          queues: [{ name: 'tally', url: queue.url }],
          client: fauxqsClientConfig(),
          waitTimeSeconds: 1,
        }),
      ],
      providers: appProviders(nestPipeline),
    })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    host = {
      deliver: (bodies) => sendAndWait(queue.url, bodies, logs),
      stats: async () => moduleRef.get(IdempotencyStats),
      paths: async () => pathsOf(moduleRef.get(SqsHandlerExplorer)),
      close: () => moduleRef.close(),
    };
    const snapshot = await run([...FIRST_ROUND, 'not json'], SECOND_ROUND);
    expect(countersByHandler(snapshot)).toEqual({
      ...SQS_HANDLER_COUNTS,
      '(unknown) -': { ...none, invalid: 1 },
    });
  });

  it('SqsServer: its own routes counted by @Idempotent(), SqsModule types by the pipeline', async () => {
    const queue = await queues.create('tally-server', { visibilityTimeout: 60 });
    const logs = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store: new BusyKeyStore(), stats: {} }), SqsModule.forRoot({})],
      controllers: [TallyPatterns],
      providers: appProviders(nestPipeline),
    })
      .setLogger(logs)
      .compile();
    const server = new SqsServer({
      queues: [{ name: 'tally', url: queue.url }],
      client: fauxqsClientConfig(),
      waitTimeSeconds: 1,
    });
    const microservice = moduleRef.createNestMicroservice({ strategy: server });
    await microservice.listen();
    host = {
      deliver: (bodies) => sendAndWait(queue.url, bodies, logs),
      stats: async () => microservice.get(IdempotencyStats),
      paths: async () => pathsOf(microservice.get(SqsHandlerExplorer)),
      close: () => microservice.close(),
    };
    const snapshot = await run(
      [...FIRST_ROUND, ...PATTERN_FIRST_ROUND, 'not json'],
      [...SECOND_ROUND, ...PATTERN_SECOND_ROUND],
    );
    // As on any Nest transport, a route without @Idempotent() and a message no route takes are
    // not counted (README, Idempotency Center); everything else once.
    expect(countersByHandler(snapshot)).toEqual({
      ...SQS_HANDLER_COUNTS,
      'tally_pattern TallyPatterns.onPattern': EVERY_IDEMPOTENT_STATUS,
    });
  });

  /** Sends the bodies to the queue and waits until each has its record log line. */
  async function sendAndWait(url: string, bodies: unknown[], logs: CapturingLogger): Promise<void> {
    const before = recordLines(logs).length;
    await Promise.all(bodies.map((body) => queues.send(url, body)));
    await waitFor(
      () => recordLines(logs).length >= before + bodies.length,
      `${bodies.length} records to be handled`,
      30_000,
    );
    expect(recordLines(logs).length - before).toBe(bodies.length);
  }
});
