import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { finalize } from 'rxjs';
import { IsOptional, IsString } from 'class-validator';
import { AcquireResult, TransactionalClaim, TransactionalRunAnswer } from '../lib/stores';
import {
  Idempotent,
  IdempotencyStore,
  IdempotencyTransaction,
  InMemoryIdempotencyStore,
  SqsEvent,
  SqsMessageHandler,
} from '../lib';
import { IdempotencyStats } from '../lib/center';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The core's side of transactional handlers, store-neutral: `runInTransaction` is part of the public
 * store protocol, and a store of the user's own (here, one whose "transaction" is a list of writes
 * applied at commit) gets the same contract as the Postgres store. What the Postgres specs cannot
 * easily make happen is made to happen here: a commit that fails after the handler, a store down
 * with `onStoreError: 'process'`, an answer outside the protocol, a keyless record.
 */

/** A store whose transaction is a list of writes, applied only at a successful commit. */
class JournalStore implements IdempotencyStore {
  readonly shared = false;
  readonly applied: string[] = [];
  failure: 'begin' | 'commit' | 'rollback' | 'off-protocol' | 'no-answer' | undefined;
  /** How long each claim takes to answer. */
  claimDelayMs = 0;
  private readonly inner = new InMemoryIdempotencyStore();

  tryAcquire(key: string, ttlMs: number, token: string) {
    return this.inner.tryAcquire(key, ttlMs, token);
  }
  markComplete(key: string, ttlMs: number, token: string) {
    return this.inner.markComplete(key, ttlMs, token);
  }
  forget(key: string, token: string) {
    return this.inner.forget(key, token);
  }

  async runInTransaction<T>(
    claim: TransactionalClaim | undefined,
    run: (transaction: unknown) => Promise<T>,
  ): Promise<TransactionalRunAnswer<T>> {
    if (this.failure === 'begin') throw new Error('the database is down');
    if (this.failure === 'off-protocol') return 'yes' as never;
    if (this.failure === 'no-answer') return undefined as never;
    if (claim !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, this.claimDelayMs));
      const answer = await this.inner.tryAcquire(claim.key, claim.idleTimeoutMs, claim.token);
      if (answer !== AcquireResult.ACQUIRED) return { answer };
    }
    const writes: string[] = [];
    try {
      const result = await run(writes);
      if (this.failure === 'commit') throw new Error('the connection broke at COMMIT');
      this.applied.push(...writes);
      if (claim !== undefined) await this.inner.markComplete(claim.key, claim.ttlMs, claim.token);
      return { answer: AcquireResult.ACQUIRED, result };
    } catch (error) {
      if (claim !== undefined) await this.inner.forget(claim.key, claim.token);
      if (this.failure === 'rollback') throw new Error('the connection broke at ROLLBACK');
      throw error;
    }
  }
}

@SqsEvent('note_taken')
class NoteTaken {
  @IsOptional() @IsString() id?: string;
  @IsString() text!: string;
}

const transactions: unknown[] = [];

@Injectable()
class Notes {
  @SqsMessageHandler(NoteTaken)
  @Idempotent({ transactional: true, requireKey: false })
  async onNote(event: NoteTaken, @IdempotencyTransaction() writes: string[]): Promise<void> {
    transactions.push(writes);
    if (event.text === 'boom') throw new Error('the handler failed');
    writes.push(event.text);
  }
}

/** A user's interceptor outside `@Idempotent()`: what `ctx.state.transaction` holds once the handler is done. */
const afterHandler: unknown[] = [];
@Injectable()
class TransactionAfterHandler implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    const host = context.getArgByIndex<{ state: { transaction?: unknown } }>(1);
    return next.handle().pipe(finalize(() => afterHandler.push(host.state.transaction)));
  }
}

describe('Transactional handlers, store-neutral', () => {
  let app: TestApp;
  let store: JournalStore;
  const start = async (onStoreError: 'fail' | 'process' = 'fail') => {
    store = new JournalStore();
    app = await createTestApp({ idempotency: { store, onStoreError, stats: {} }, providers: [Notes] });
  };
  const claims = async () => (await app.get(IdempotencyStats).activity()).claims;
  const storeErrors = async () => (await app.get(IdempotencyStats).snapshot()).totals.store_errors;
  beforeEach(() => (transactions.length = 0));
  afterEach(() => app?.close());

  it('applies the writes at the commit, and acks a copy as a duplicate', async () => {
    await start();
    expect((await app.sqs.send({ type: 'note_taken', id: 'n1', text: 'hello' })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'note_taken', id: 'n1', text: 'hello' })).status).toBe('DUPLICATE');
    expect(store.applied).toEqual(['hello']);
  });

  it('gives a keyless record (requireKey: false) a transaction too, with no claim in it', async () => {
    await start();
    expect((await app.sqs.send({ type: 'note_taken', text: 'a' })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'note_taken', text: 'a' })).status).toBe('OK');
    expect(store.applied).toEqual(['a', 'a']);
    expect(transactions).toHaveLength(2);
    // No claim was made: none is counted.
    expect(await claims()).toMatchObject({ claims: 0, errors: 0 });
  });

  it('fails the record when the commit fails after the handler ran, and the redelivery applies it once', async () => {
    await start();
    store.failure = 'commit';
    const failed = await app.sqs.send({ type: 'note_taken', id: 'n2', text: 'lost' });
    expect(failed.status).toBe('FAILED');
    expect(failed.result.error?.message).toMatch(
      /idempotency store runInTransaction\(".*n2"\) failed: the connection broke at COMMIT\. The record fails and will be redelivered/,
    );
    expect(store.applied).toEqual([]);
    store.failure = undefined;
    expect((await app.sqs.send({ type: 'note_taken', id: 'n2', text: 'lost' })).status).toBe('OK');
    expect(store.applied).toEqual(['lost']);
    expect((await app.get(IdempotencyStats).snapshot()).totals.store_errors).toBe(1);
  });

  it("fails closed when the store is down, even with onStoreError: 'process' (no transaction to give)", async () => {
    await start('process');
    store.failure = 'begin';
    expect((await app.sqs.send({ type: 'note_taken', id: 'n3', text: 'x' })).status).toBe('FAILED');
    expect(transactions).toEqual([]);
  });

  it.each([
    ['off-protocol', '"yes"'],
    ['no-answer', 'undefined'],
  ] as const)(
    'takes an answer outside the protocol (%s) for a store error, not a success',
    async (failure, told) => {
      await start();
      store.failure = failure;
      const sent = await app.sqs.send({ type: 'note_taken', id: 'n4', text: 'x' });
      expect(sent.status).toBe('FAILED');
      expect(sent.result.error?.message).toContain(
        `runInTransaction resolved to ${told}, not { answer: ACQUIRED | COMPLETED | IN_PROGRESS }`,
      );
    },
  );

  it('times each claim from its start to the store’s answer, whether it runs the handler or finds a duplicate', async () => {
    await start();
    store.claimDelayMs = 20;
    const began = performance.now();
    expect((await app.sqs.send({ type: 'note_taken', id: 't1', text: 'x' })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'note_taken', id: 't1', text: 'x' })).status).toBe('DUPLICATE');
    const took = performance.now() - began;
    const { claims: count, timed, p50Ms, p99Ms } = await claims();
    expect({ count, timed }).toEqual({ count: 2, timed: 2 });
    // Each took the store's 20 ms at least, and neither more than the two sends together.
    expect(p50Ms).toBeGreaterThanOrEqual(19);
    expect(p99Ms).toBeLessThanOrEqual(took);
  });

  it("counts a transactional claim as answered once the handler runs, and a store's failure before it as a failed claim", async () => {
    await start();
    expect((await app.sqs.send({ type: 'note_taken', id: 'c1', text: 'x' })).status).toBe('OK');
    expect(await claims()).toMatchObject({ claims: 1, errors: 0 });
    store.failure = 'begin';
    expect((await app.sqs.send({ type: 'note_taken', id: 'c2', text: 'x' })).status).toBe('FAILED');
    expect(await claims()).toMatchObject({ claims: 1, errors: 1 });
  });

  it('counts a commit that fails after the handler as a store error, not as a failed claim (the claim was answered)', async () => {
    await start();
    store.failure = 'commit';
    expect((await app.sqs.send({ type: 'note_taken', id: 'c3', text: 'x' })).status).toBe('FAILED');
    expect(await claims()).toMatchObject({ claims: 1, errors: 0 });
    expect(await storeErrors()).toBe(1);
  });

  it("fails with the handler's own error, and with a store error when the store throws another one (a failed ROLLBACK)", async () => {
    await start();
    const failed = await app.sqs.send({ type: 'note_taken', id: 'h1', text: 'boom' });
    expect(failed.status).toBe('FAILED');
    expect(failed.result.error?.message).toBe('the handler failed');
    expect(await storeErrors()).toBe(0);
    store.failure = 'rollback';
    const rolledBack = await app.sqs.send({ type: 'note_taken', id: 'h2', text: 'boom' });
    expect(rolledBack.status).toBe('FAILED');
    expect(rolledBack.result.error?.message).toMatch(
      /idempotency store runInTransaction\(".*h2"\) failed: the connection broke at ROLLBACK/,
    );
    expect(await storeErrors()).toBe(1);
  });

  it("fails a keyless record with a store error when the store is down, and with the handler's own error when it throws", async () => {
    await start('process');
    store.failure = 'begin';
    const down = await app.sqs.send({ type: 'note_taken', text: 'x' });
    expect(down.status).toBe('FAILED');
    expect(down.result.error?.message).toMatch(
      /the idempotency store runInTransaction\("\(no key\)"\) failed: the database is down/,
    );
    expect(await storeErrors()).toBe(1);
    expect(transactions).toEqual([]);
    store.failure = undefined;
    const thrown = await app.sqs.send({ type: 'note_taken', text: 'boom' });
    expect(thrown.status).toBe('FAILED');
    expect(thrown.result.error?.message).toBe('the handler failed');
    expect(await storeErrors()).toBe(1);
    expect(store.applied).toEqual([]);
  });

  it('takes the transaction off ctx.state once the handler is done (committed or rolled back, it is of no use)', async () => {
    afterHandler.length = 0;
    store = new JournalStore();
    app = await createTestApp({
      idempotency: { store },
      providers: [Notes, { provide: APP_INTERCEPTOR, useClass: TransactionAfterHandler }],
    });
    expect((await app.sqs.send({ type: 'note_taken', id: 't1', text: 'x' })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'note_taken', id: 't2', text: 'boom' })).status).toBe('FAILED');
    expect(transactions).toHaveLength(2);
    expect(afterHandler).toEqual([undefined, undefined]);
  });
});
