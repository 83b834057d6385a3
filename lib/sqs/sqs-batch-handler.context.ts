import { BATCH_HANDLER_CALL } from '../idempotency/idempotency.constants';
import type { SqsContext } from './sqs-context';

/**
 * A batch handler's second argument (`@SqsBatchHandler()`): the queue, and each event's own `SqsContext`
 * (its message id, attributes, envelopes and resolved key, `ctx.state.idempotencyKey`), index for index
 * with the events the handler got.
 */
export class SqsBatchContext {
  /** Tells `@Idempotent()`'s interceptor that the events were claimed one by one before this call. */
  readonly [BATCH_HANDLER_CALL] = true;
  /**
   * The transaction of a transactional batch handler (`@Idempotent({ transactional: true })` on a
   * Postgres store): the handler's writes in it commit with the events' claims and completions.
   */
  transaction: unknown = undefined;

  constructor(
    /** The queue's name, as configured in `SqsModule` or taken from the Lambda record's ARN. */
    readonly queue: string,
    /** The handled event type. */
    readonly eventType: string,
    /** Each event's context, in the order of the events. */
    readonly contexts: readonly SqsContext[],
    private readonly events: readonly object[],
  ) {}

  /** The message ids of the events, in their order. */
  get messageIds(): string[] {
    return this.contexts.map((context) => context.messageId);
  }

  /** The context of one of the events; throws for an object the handler was not given. */
  contextOf(event: object): SqsContext {
    const index = this.events.indexOf(event);
    if (index < 0) throw new Error('SqsBatchContext.contextOf: not one of the events of this batch call');
    return this.contexts[index];
  }
}

/**
 * What a batch handler returns to say that some of its events failed, each with its cause: those are
 * left for redelivery (their claims released), the rest succeed (their keys completed). A cause that is a
 * `SkipMessageException` acks its event as skipped instead. Returning nothing means every event succeeded.
 *
 * @example
 * ```ts
 * const failures = new SqsBatchFailures();
 * for (const [event, error] of rejectedRows) failures.add(event, error);
 * return failures;
 * ```
 */
export class SqsBatchFailures {
  private readonly failed = new Map<object, unknown>();

  /** @param failures each failed event (as the handler got it) with its cause */
  constructor(failures: Iterable<readonly [event: object, cause: unknown]> = []) {
    for (const [event, cause] of failures) this.add(event, cause);
  }

  /** Names `event` (one the handler got) as failed, with its cause. */
  add(event: object, cause: unknown): this {
    this.failed.set(event, cause);
    return this;
  }

  /** How many events are named. */
  get size(): number {
    return this.failed.size;
  }

  /** Each failed event with its cause. */
  entries(): IterableIterator<[object, unknown]> {
    return this.failed.entries();
  }
}
