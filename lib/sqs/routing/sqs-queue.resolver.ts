import { ARRIVED_PAYLOAD } from '../../idempotency/idempotency.constants';
import { parseKeyPath } from '../../idempotency/idempotency-key';
import { SqsMessageDecoding } from './sqs-message.decoding';
import type { SqsContext } from '../sqs-context';
import { eventValidator } from './sqs-event.validator';
import type { SqsPipelineQueue, SqsRoutedRecord } from '../pipeline/sqs-record.pipeline';
import type { SqsRecordLike } from '../sqs-record.interface';
import type { SqsQueueRouter, SqsRoute } from './sqs-queue.router';
import {
  ResolvedSqsDispatchOptions,
  SQS_DISPATCH_DEFAULTS,
  SqsDispatchOptions,
} from '../sqs-module-options.interface';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/** A queue as a host runs it: its effective options, its router and its decoding stage. */
export interface ResolvedQueue extends SqsPipelineQueue {
  readonly options: ResolvedSqsDispatchOptions;
  readonly router: SqsQueueRouter;
  /** Its decoding stage: envelopes and the body decoder. */
  readonly decoding: SqsMessageDecoding;
}

/** Builds a queue's decoding stage beside its router; throws a sentence naming the queue for an unusable option. */
export function resolveQueue(
  name: string,
  fifo: boolean,
  options: ResolvedSqsDispatchOptions,
  router: SqsQueueRouter,
): ResolvedQueue {
  const decoding = new SqsMessageDecoding(name, options);
  const toEvent = eventValidator(options.validation);
  /** Decoding, then the payload mapped onto the event class and validated (a fallback or an `@EventPattern()` gets it as it is). */
  const routeRecord = async (record: SqsRecordLike, context: SqsContext): Promise<SqsRoutedRecord> => {
    let route: SqsRoute | undefined;
    try {
      // Awaited only when it is a promise (a decoder function's): an `await` of a value is one more
      // microtask turn per record.
      let decoded = decoding.decode(record, router, context);
      if (decoded instanceof Promise) decoded = await decoded;
      if (decoded.skip !== undefined) return { kind: 'skip', reason: decoded.skip };
      route = decoded.route;
      context.eventType ??= route.eventType;
      context[ARRIVED_PAYLOAD] = decoded.payload;
      const { eventClass, eventType, handlers, sink } = route;
      const event = eventClass === undefined ? decoded.payload : await toEvent(eventClass, decoded.payload);
      return { kind: 'handlers', event, eventType, handlers, sink };
    } catch (error) {
      return { kind: 'invalid', error: error as Error, sink: route?.sink };
    }
  };
  const batchHandlers = router.batchRoutes.length > 0; // its batches go through the batch runner
  return { name, fifo, options, router, decoding, route: routeRecord, batchHandlers };
}

/** A FIFO queue: as declared, else by its name or URL. */
export function isFifoQueue(name: string, declared: { fifo?: boolean; url?: string } | undefined): boolean {
  return declared?.fifo ?? (name.endsWith('.fifo') || (declared?.url?.endsWith('.fifo') ?? false));
}

/** Merges dispatch options (module → queue → host, later winning) and checks the result. */
export function resolveDispatchOptions(
  layers: ReadonlyArray<SqsDispatchOptions | undefined>,
  where: string,
): ResolvedSqsDispatchOptions {
  const resolved: ResolvedSqsDispatchOptions = { ...SQS_DISPATCH_DEFAULTS };
  for (const layer of layers) {
    if (!layer) continue;
    // A resolved layer (`SqsServer`'s options over `SqsModule`'s) counts as configured only where it was.
    if (
      layer.discriminator !== undefined &&
      (layer as ResolvedSqsDispatchOptions).discriminatorConfigured !== false
    ) {
      resolved.discriminator = layer.discriminator;
      resolved.discriminatorConfigured = true;
    }
    for (const key of ['decoder', 'envelope', 'concurrency', 'fifoFailureMode'] as const) {
      if (layer[key] !== undefined) (resolved as Record<typeof key, unknown>)[key] = layer[key];
    }
    if (layer.validation !== undefined) resolved.validation = { ...resolved.validation, ...layer.validation };
  }
  if (!Number.isInteger(resolved.concurrency) || resolved.concurrency < 1) {
    throw new SqsConfigurationError(
      `SQS ${where}: concurrency must be a positive integer, got ${String(resolved.concurrency)}.`,
    );
  }
  if (resolved.fifoFailureMode !== 'isolate_groups' && resolved.fifoFailureMode !== 'halt_batch') {
    throw new SqsConfigurationError(
      `SQS ${where}: fifoFailureMode must be 'isolate_groups' or 'halt_batch', got ${String(resolved.fifoFailureMode)}.`,
    );
  }
  const discriminator = resolved.discriminator as unknown;
  if (typeof discriminator !== 'function') {
    const shape = discriminator as { field?: unknown; attribute?: unknown } | null;
    if (typeof shape?.attribute === 'string' && shape.attribute.length > 0) return resolved;
    const path = typeof shape?.field === 'string' ? parseKeyPath(shape.field) : undefined;
    if (path === undefined || typeof path === 'string') {
      throw new SqsConfigurationError(
        `SQS ${where}: discriminator must be { field: 'type' }, { attribute: 'eventType' } or a function` +
          (typeof path === 'string' ? ` (${path})` : '') +
          '.',
      );
    }
  }
  return resolved;
}
