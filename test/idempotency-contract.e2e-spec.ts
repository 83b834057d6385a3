import { Injectable } from '@nestjs/common';
import { IsObject, IsString } from 'class-validator';
import { AcquireResult } from '../lib/stores';
import {
  Idempotent,
  IdempotencyKey,
  InMemoryIdempotencyStore,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { SqsTestClient } from '../lib/testing';
import { deferred, OrdersLedger, OrdersModule, orderCreated } from './fixtures/orders.fixture';
import { RecordingStore, recordingStoreDefaults } from './support/recording-store';
import { waitFor } from './support/wait-for';
import { SqsHandlerExplorer } from '../lib/sqs/nest/sqs-handler.explorer';
import { createTestApp, FakeClock, TestApp, testAppDefaults } from './support/test-app';

/**
 * Every row of the idempotency table in DESIGN.md and every behaviour of the specification's
 * test list, through a real Nest app and the Lambda path.
 */
describe('the idempotency contract', () => {
  let app: TestApp;
  let ledger: OrdersLedger;
  let clock: FakeClock;
  let store: RecordingStore;

  beforeEach(async () => {
    clock = new FakeClock();
    store = new RecordingStore(new InMemoryIdempotencyStore({ clock: clock.read }));
    app = await createTestApp({
      idempotency: { store, ttl: 60_000, inProgressTtl: 10_000, stats: {} },
      imports: [OrdersModule],
      client: { remainingTimeMs: 60_000 },
    });
    ledger = app.get(OrdersLedger);
  });
  afterEach(() => app.close());

  it(`runs the handler on the ${testAppDefaults.nestPipeline ? 'Nest pipeline' : 'direct path'}`, async () => {
    await app.sqs.send(orderCreated('e1'));
    const [handler] = app.get(SqsHandlerExplorer).getHandlers();
    expect(handler.path).toBe(testAppDefaults.nestPipeline ? 'nest' : 'direct');
  });

  it(`claims and completes a batch's keys ${recordingStoreDefaults.batches ? 'in one batch call each' : 'key by key'}`, async () => {
    const { statuses } = await app.sqs.sendBatch([
      orderCreated('e1'),
      orderCreated('e2'),
      orderCreated('e3'),
    ]);
    expect(statuses).toEqual(['OK', 'OK', 'OK']);
    expect(store.batchCalls).toEqual(
      recordingStoreDefaults.batches
        ? [
            { method: 'tryAcquireMany', size: 3 },
            { method: 'markCompleteMany', size: 3 },
          ]
        : [],
    );
    // Per key, the same calls either way (a batch call makes each key's).
    expect(store.methods().sort()).toEqual([
      ...Array(3).fill('markComplete'),
      ...Array(3).fill('tryAcquire'),
    ]);
  });

  it('ACQUIRED: a first sighting runs the handler', async () => {
    const { status, response } = await app.sqs.send(orderCreated('e1'));
    expect(status).toBe('OK');
    expect(response.batchItemFailures).toEqual([]);
    expect(ledger.count('order-e1')).toBe(1);
  });

  it('COMPLETED: a duplicate after completion is acked without running the handler', async () => {
    await app.sqs.send(orderCreated('e1'));
    const duplicate = await app.sqs.send(orderCreated('e1')); // producer retry: new messageId, same id
    expect(duplicate.status).toBe('DUPLICATE');
    expect(duplicate.response.batchItemFailures).toEqual([]);
    expect(ledger.calls).toBe(1);
    expect(ledger.count('order-e1')).toBe(1);
  });

  it('a redelivery of the same message after completion is a duplicate too', async () => {
    const first = await app.sqs.send(orderCreated('e1'));
    const again = await app.sqs.sendRecords([SqsTestClient.redelivery(first.record)]);
    expect(again.statuses).toEqual(['DUPLICATE']);
    expect(ledger.calls).toBe(1);
  });

  it('IN_PROGRESS: a concurrent duplicate in the same batch fails (is not skipped) and succeeds as a duplicate later', async () => {
    const gate = deferred();
    ledger.script.set('order-e1', gate.promise);
    const batch = app.sqs.sendBatch([orderCreated('e1'), orderCreated('e1')]);
    await new Promise((resolve) => setImmediate(resolve));
    gate.resolve();
    const { statuses, response, records, results } = await batch;
    expect(statuses).toEqual(['OK', 'IN_PROGRESS']);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1].messageId }]);
    expect(results[1].error?.name).toBe('IdempotencyInProgressError');
    expect(ledger.calls).toBe(1);
    const redelivered = await app.sqs.sendRecords([SqsTestClient.redelivery(records[1])]);
    expect(redelivered.statuses).toEqual(['DUPLICATE']);
    expect(ledger.count('order-e1')).toBe(1);
  });

  it('distinct keys both run', async () => {
    const { statuses } = await app.sqs.sendBatch([orderCreated('e1', 'o1'), orderCreated('e2', 'o1')]);
    expect(statuses).toEqual(['OK', 'OK']);
    expect(ledger.count('o1')).toBe(2);
  });

  it('exposes the resolved key to the handler (@IdempotencyKey and ctx.state.idempotencyKey) and the result', async () => {
    const { result } = await app.sqs.send(orderCreated('e-42'));
    expect(ledger.keys).toEqual(['e-42']);
    expect(ledger.stateKeys).toEqual(['e-42']);
    expect(result.key).toBe('e-42');
  });

  it('a failure releases the claim, so the redelivery retries and succeeds', async () => {
    ledger.script.set('order-e1', 'fail');
    const first = await app.sqs.send(orderCreated('e1'));
    expect(first.status).toBe('FAILED');
    expect(first.response.batchItemFailures).toEqual([{ itemIdentifier: first.record.messageId }]);
    // Released, not left to its lease: the redelivery can claim it at once.
    expect(await store.inner.inspect('idempotency:order_created:e1')).toEqual({ state: 'UNKNOWN' });
    ledger.script.delete('order-e1');
    const retry = await app.sqs.sendRecords([SqsTestClient.redelivery(first.record)]);
    expect(retry.statuses).toEqual(['OK']);
    expect(ledger.count('order-e1')).toBe(1);
    expect(ledger.calls).toBe(2);
  });

  it('a handler-raised SkipMessageException acks the record and still marks the key completed', async () => {
    ledger.script.set('order-e1', 'skip');
    const skipped = await app.sqs.send(orderCreated('e1'));
    expect(skipped.status).toBe('SKIPPED');
    expect(skipped.response.batchItemFailures).toEqual([]);
    expect(skipped.result.error?.message).toBe('already shipped');
    expect(await store.inner.inspect('idempotency:order_created:e1')).toEqual({
      state: 'COMPLETED',
      expiresInMs: 60_000,
    });
    ledger.script.delete('order-e1');
    expect((await app.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
    expect(ledger.calls).toBe(1);
  });

  it('a completed key is forgotten after ttl: a late duplicate runs again', async () => {
    await app.sqs.send(orderCreated('e1'));
    clock.advance(59_999);
    expect((await app.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
    clock.advance(1);
    expect((await app.sqs.send(orderCreated('e1'))).status).toBe('OK');
    expect(ledger.count('order-e1')).toBe(2);
  });

  it('an expired lease (a crashed worker) is re-acquired', async () => {
    // A worker claimed the key and was killed: no markComplete, no forget.
    await store.inner.tryAcquire('idempotency:order_created:e1', 10_000, 'crashed-worker');
    expect((await app.sqs.send(orderCreated('e1'))).status).toBe('IN_PROGRESS');
    clock.advance(10_000);
    const retry = await app.sqs.send(orderCreated('e1'));
    expect(retry.status).toBe('OK');
    expect(ledger.count('order-e1')).toBe(1);
  });

  it('fencing: a worker whose lease expired cannot overwrite the new owner, and the lost claim is counted', async () => {
    const slowA = deferred();
    ledger.script.set('order-e1', slowA.promise);
    const attemptA = app.sqs.send(orderCreated('e1'));
    await waitFor(() => ledger.calls === 1);
    clock.advance(10_000); // A's lease expires while it still runs
    const slowB = deferred();
    ledger.script.set('order-e1', slowB.promise);
    const attemptB = app.sqs.send(orderCreated('e1'));
    await waitFor(() => ledger.calls === 2);

    slowA.resolve();
    expect((await attemptA).status).toBe('OK');
    const lost = store.calls.find((call) => call.method === 'markComplete');
    expect(lost?.answer).toBe(false);
    expect((await app.get(IdempotencyStats).snapshot()).totals.leases_lost).toBe(1);
    // B still owns the key: another copy is in flight, not a duplicate.
    expect((await app.sqs.send(orderCreated('e1'))).status).toBe('IN_PROGRESS');

    slowB.resolve();
    expect((await attemptB).status).toBe('OK');
    expect((await app.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
  });

  it('claims with a fresh token per attempt and keys of the form <keyPrefix>:<event type>:<key>', async () => {
    await app.sqs.send(orderCreated('e1'));
    ledger.script.set('order-e2', 'fail');
    await app.sqs.send(orderCreated('e2'));
    await app.sqs.send(orderCreated('e2'));
    const claims = store.calls.filter((call) => call.method === 'tryAcquire');
    expect(claims.map((call) => call.key)).toEqual([
      'idempotency:order_created:e1',
      'idempotency:order_created:e2',
      'idempotency:order_created:e2',
    ]);
    expect(new Set(claims.map((call) => call.token)).size).toBe(3);
    const settled = store.calls.filter((call) => call.method !== 'tryAcquire');
    expect(settled.map((call) => call.token)).toEqual(claims.map((call) => call.token));
  });

  it('completes with ttl and claims with inProgressTtl', async () => {
    await app.sqs.send(orderCreated('e1'));
    expect(store.calls.map((call) => [call.method, call.ttlMs])).toEqual([
      ['tryAcquire', 10_000],
      ['markComplete', 60_000],
    ]);
  });

  it('an event that fails validation fails as INVALID and never claims a key', async () => {
    const { id: _id, ...keyless } = orderCreated('e1');
    const { status, result, response, record } = await app.sqs.send(keyless);
    expect(status).toBe('INVALID');
    expect(result.error?.message).toContain(record.messageId);
    expect(result.error?.message).toContain('id must be a string');
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(store.calls).toEqual([]);
  });
});

// Events whose key is not validated by the class, to reach the key rules themselves.
@SqsEvent('loose_event')
class LooseEvent {
  id?: unknown;
  @IsString() name!: string;
}

@SqsEvent('enveloped')
class Enveloped {
  @IsObject() metadata!: { eventId?: unknown };
}

@Injectable()
class KeyRulesHandlers {
  readonly seen: Array<{ name: string; key: string | undefined }> = [];

  @SqsMessageHandler(LooseEvent)
  @Idempotent()
  async onLoose(event: LooseEvent, _ctx: SqsContext, @IdempotencyKey() key?: string): Promise<void> {
    this.seen.push({ name: event.name, key });
  }

  @SqsMessageHandler(Enveloped)
  @Idempotent('metadata.eventId')
  async onEnveloped(_event: Enveloped, ctx: SqsContext): Promise<void> {
    this.seen.push({ name: 'enveloped', key: ctx.state.idempotencyKey });
  }
}

@SqsEvent('keyless_ok')
class KeylessOk {
  @IsString() name!: string;
}

@Injectable()
class RequireKeyOffHandler {
  runs = 0;
  @SqsMessageHandler(KeylessOk)
  @Idempotent({ requireKey: false })
  async onKeyless(): Promise<void> {
    this.runs++;
  }
}

describe('idempotency keys', () => {
  let app: TestApp;
  let store: RecordingStore;

  beforeEach(async () => {
    store = new RecordingStore();
    app = await createTestApp({
      idempotency: { store },
      providers: [KeyRulesHandlers, RequireKeyOffHandler],
    });
  });
  afterEach(() => app.close());

  it('reads dot paths through envelopes', async () => {
    const sent = await app.sqs.send({ type: 'enveloped', metadata: { eventId: 'evt-9' } });
    expect(sent.status).toBe('OK');
    expect((await app.sqs.send({ type: 'enveloped', metadata: { eventId: 'evt-9' } })).status).toBe(
      'DUPLICATE',
    );
    expect(store.calls[0].key).toBe('idempotency:enveloped:evt-9');
  });

  it.each([
    ['missing', undefined, 'is missing'],
    ['an empty string', '', 'is an empty string'],
    ['an object', { a: 1 }, 'is an object'],
    ['an array', ['a'], 'is an array'],
    ['a boolean', true, 'is boolean true'],
    ['null', null, 'is null'],
    ['an integer beyond 2^53', 2 ** 60, 'is the integer 1152921504606847000, beyond 2^53'],
  ])('a key that is %s fails the record with a clear error and claims nothing', async (_what, id, reason) => {
    const { status, result, response, record } = await app.sqs.send({ type: 'loose_event', id, name: 'n' });
    expect(status).toBe('FAILED');
    expect(result.error?.name).toBe('MissingIdempotencyKeyError');
    expect(result.error?.message).toContain(`the keyPath "id" ${reason}`);
    expect(result.error?.message).toContain('requireKey: false');
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(store.calls).toEqual([]);
    expect(app.get(KeyRulesHandlers).seen).toEqual([]);
  });

  it('NaN is not a key', async () => {
    const record = await app.sqs.send('{"type":"loose_event","name":"n","id":1e400}');
    expect(record.status).toBe('FAILED'); // JSON's 1e400 is Infinity
    expect(record.result.error?.message).toContain('not a finite number');
  });

  it('finite numbers are keys', async () => {
    await app.sqs.send({ type: 'loose_event', id: 42, name: 'n' });
    expect(store.calls[0].key).toBe('idempotency:loose_event:42');
    expect((await app.sqs.send({ type: 'loose_event', id: 42, name: 'n' })).status).toBe('DUPLICATE');
  });

  it('a payload cannot reach a key (or anything) through __proto__', async () => {
    const { status, result } = await app.sqs.send('{"type":"loose_event","name":"n","__proto__":{"id":"x"}}');
    expect(status).toBe('INVALID');
    expect(result.error?.message).toContain('"__proto__"');
    expect(({} as Record<string, unknown>).id).toBeUndefined();
    expect(store.calls).toEqual([]);
  });

  it('hashes keys longer than 200 characters, and keys with control characters or lone surrogates', async () => {
    const long = 'k'.repeat(10_000);
    await app.sqs.send({ type: 'loose_event', id: long, name: 'long' });
    await app.sqs.send({ type: 'loose_event', id: 'a\u0000b', name: 'control' });
    await app.sqs.send({ type: 'loose_event', id: 'x\ud800', name: 'surrogate1' });
    await app.sqs.send({ type: 'loose_event', id: 'x\udbff', name: 'surrogate2' });
    await app.sqs.send({ type: 'loose_event', id: 'k'.repeat(200), name: 'exactly200' });
    const keys = store.calls.filter((call) => call.method === 'tryAcquire').map((call) => call.key);
    // "sha256:<hex>" in the store, its ":" escaped like any key's.
    expect(keys[0]).toMatch(/^idempotency:loose_event:sha256%3A[0-9a-f]{64}$/);
    expect(keys[1]).toMatch(/^idempotency:loose_event:sha256%3A[0-9a-f]{64}$/);
    expect(keys[2]).toMatch(/sha256%3A/);
    expect(keys[3]).toMatch(/sha256%3A/);
    expect(keys[2]).not.toBe(keys[3]); // distinct lone surrogates stay distinct
    expect(keys[4]).toBe(`idempotency:loose_event:${'k'.repeat(200)}`);
    // The same long key hashes the same way: its duplicate is caught.
    expect((await app.sqs.send({ type: 'loose_event', id: long, name: 'long' })).status).toBe('DUPLICATE');
  });

  it('unicode lookalikes stay distinct keys', async () => {
    const latin = await app.sqs.send({ type: 'loose_event', id: 'order-A', name: 'latin' });
    const cyrillic = await app.sqs.send({ type: 'loose_event', id: 'order-\u0410', name: 'cyrillic' });
    expect([latin.status, cyrillic.status]).toEqual(['OK', 'OK']);
  });

  it('requireKey: false processes a keyless payload without dedup', async () => {
    const first = await app.sqs.send({ type: 'keyless_ok', name: 'n' });
    const second = await app.sqs.send({ type: 'keyless_ok', name: 'n' });
    expect([first.status, second.status]).toEqual(['OK', 'OK']);
    expect(app.get(RequireKeyOffHandler).runs).toBe(2);
    expect(store.calls).toEqual([]);
  });
});

describe('store protocol', () => {
  it('a plain-object store with the three methods sees exactly tryAcquire→markComplete on success and tryAcquire→forget on failure', async () => {
    const seen: string[] = [];
    const keys = new Map<string, string>();
    const plainStore = {
      async tryAcquire(key: string) {
        seen.push('tryAcquire');
        if (keys.has(key))
          return keys.get(key) === 'done' ? AcquireResult.COMPLETED : AcquireResult.IN_PROGRESS;
        keys.set(key, 'running');
        return AcquireResult.ACQUIRED;
      },
      async markComplete(key: string) {
        seen.push('markComplete');
        keys.set(key, 'done');
      },
      async forget(key: string) {
        seen.push('forget');
        keys.delete(key);
      },
    };
    // A store that does not say it is local is taken for a shared one: it needs a service identity.
    const app = await createTestApp({
      idempotency: { store: plainStore, service: 'orders' },
      imports: [OrdersModule],
    });
    try {
      expect((await app.sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect(seen).toEqual(['tryAcquire', 'markComplete']);
      expect([...keys.keys()]).toEqual(['idempotency:orders:order_created:e1']);
      seen.length = 0;
      app.get(OrdersLedger).script.set('order-e2', 'fail');
      expect((await app.sqs.send(orderCreated('e2'))).status).toBe('FAILED');
      expect(seen).toEqual(['tryAcquire', 'forget']);
      seen.length = 0;
      expect((await app.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');
      expect(seen).toEqual(['tryAcquire']);
    } finally {
      await app.close();
    }
  });

  it('fails closed when the store fails: the handler does not run unclaimed', async () => {
    const broken = new RecordingStore();
    broken.tryAcquire = async () => {
      throw new Error('connection refused');
    };
    const app = await createTestApp({ idempotency: { store: broken }, imports: [OrdersModule] });
    try {
      const { status, result } = await app.sqs.send(orderCreated('e1'));
      expect(status).toBe('FAILED');
      expect(result.error?.name).toBe('IdempotencyStoreError');
      expect(result.error?.message).toContain('connection refused');
      expect(app.get(OrdersLedger).calls).toBe(0);
    } finally {
      await app.close();
    }
  });

  it("onStoreError: 'process' runs the handler without dedup when the store fails, and counts it", async () => {
    const broken = new RecordingStore();
    broken.tryAcquire = async () => {
      throw new Error('connection refused');
    };
    const app = await createTestApp({
      idempotency: { store: broken, onStoreError: 'process', stats: {} },
      imports: [OrdersModule],
    });
    try {
      expect((await app.sqs.send(orderCreated('e1'))).status).toBe('OK');
      expect(app.get(OrdersLedger).count('order-e1')).toBe(1);
      expect((await app.get(IdempotencyStats).snapshot()).totals).toMatchObject({
        handled: 1,
        store_errors: 1,
      });
    } finally {
      await app.close();
    }
  });

  it('sizes the lease from the Lambda deadline, never below one second', async () => {
    const store = new RecordingStore();
    const app = await createTestApp({
      idempotency: { store, inProgressTtl: 300_000 },
      imports: [OrdersModule],
    });
    try {
      const { buildLambdaContext, buildSqsRecord } = await import('../lib/testing');
      await app.sqs.sendRecords([buildSqsRecord(orderCreated('e1'))], buildLambdaContext(10_000));
      await app.sqs.sendRecords([buildSqsRecord(orderCreated('e2'))], buildLambdaContext(0));
      await app.sqs.sendRecords([buildSqsRecord(orderCreated('e3'))], {});
      const leases = store.calls.filter((call) => call.method === 'tryAcquire').map((call) => call.ttlMs!);
      expect(leases[0]).toBeGreaterThan(9_000);
      expect(leases[0]).toBeLessThanOrEqual(10_000);
      expect(leases[1]).toBe(1_000);
      expect(leases[2]).toBe(300_000);
    } finally {
      await app.close();
    }
  });
});
