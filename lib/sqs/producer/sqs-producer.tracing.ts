import { Logger } from '@nestjs/common';
import type { Attributes, Context, Link, TextMapSetter, Tracer } from '@opentelemetry/api';
import type { OpenTelemetryApi } from '../../common/tracer-provider.check';
import type { OutgoingEntry } from './sqs-batch.sender';
import type { SqsAttributeInput } from './sqs-producer.options';

/**
 * The producer's side of the trace (issue 52): a `send <queue>` span per call, and the context each
 * message is created in written into its message attributes, where the consumer's record span links
 * to it. One message: the send span (PRODUCER) is that context. A batch: one `create <queue>` span
 * (PRODUCER) per message, each written into its message, and the send span (CLIENT, as the messaging
 * conventions have it for batches) links to them all. Loaded only where an SDK registered a tracer
 * provider.
 *
 * A message already carrying a context (the app put `traceparent` there) keeps it. SQS takes at most
 * 10 message attributes: a message whose own attributes leave no room for the context is sent
 * without it (never failed), said once per destination, and counted on the span
 * (`idempotent_sqs.context_skipped`). The attributes written count in the batch's 256 KiB.
 */

/** SQS's and SNS's limit of message attributes per message. */
const MAX_ATTRIBUTES = 10;
/** SQS's and SNS's limit of a message's size. */
const MAX_MESSAGE_BYTES = 262_144;

/** A message attribute as the API takes it. */
type OutgoingAttribute = Exclude<SqsAttributeInput, string | number | Uint8Array>;

const SET_STRING: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** Where the messages go: a queue or a topic, as the conventions name it. */
export interface ProducerDestination {
  /** `aws_sqs` or `aws_sns`. */
  readonly system: 'aws_sqs' | 'aws_sns';
  /** The queue's or topic's name. */
  readonly name: string;
  /** The queue's URL or the topic's ARN. */
  readonly address: string;
}

export class ProducerTracing {
  private readonly tracer: Tracer;
  private readonly logger = new Logger('SqsProducer');
  /** The destinations already told that a message had no room for its context. */
  private readonly warned = new Set<string>();

  constructor(private readonly api: OpenTelemetryApi) {
    this.tracer = api.trace.getTracer('nestjs-idempotent-sqs');
  }

  /**
   * Runs `deliver` (the batch API calls, retries included) under the send span, after writing each
   * entry's context; answers the entries as they are to be sent.
   */
  async send<T, R>(
    destination: ProducerDestination,
    entries: OutgoingEntry<T>[],
    deliver: (entries: OutgoingEntry<T>[]) => Promise<R>,
  ): Promise<R> {
    const { api } = this;
    const parent = api.context.active();
    const batch = entries.length > 1;
    const base: Attributes = {
      'messaging.system': destination.system,
      'messaging.destination.name': destination.name,
    };
    if (destination.system === 'aws_sqs') base['aws.sqs.queue.url'] = destination.address;
    let skipped = 0;
    let sent = entries;
    let links: Link[] | undefined;
    if (batch) {
      links = [];
      sent = entries.map((entry) => {
        const create = this.tracer.startSpan(
          `create ${destination.name}`,
          {
            kind: api.SpanKind.PRODUCER,
            attributes: {
              ...base,
              'messaging.operation.name': 'create',
              'messaging.operation.type': 'create',
            },
          },
          parent,
        );
        const written = this.withContext(entry, api.trace.setSpan(parent, create));
        if (written === undefined) skipped++;
        links!.push({ context: create.spanContext() });
        create.end();
        return written ?? entry;
      });
    }
    const span = this.tracer.startSpan(
      `send ${destination.name}`,
      {
        kind: batch ? api.SpanKind.CLIENT : api.SpanKind.PRODUCER,
        attributes: {
          ...base,
          'messaging.operation.name': 'send',
          'messaging.operation.type': 'send',
          ...(batch ? { 'messaging.batch.message_count': entries.length } : {}),
        },
        links,
      },
      parent,
    );
    const active = api.trace.setSpan(parent, span);
    if (!batch) {
      const written = this.withContext(entries[0], active);
      if (written === undefined) skipped++;
      sent = [written ?? entries[0]];
    }
    if (skipped > 0) {
      span.setAttribute('idempotent_sqs.context_skipped', skipped);
      this.warnOnce(destination, skipped);
    }
    try {
      const result = await api.context.with(active, () => deliver(sent));
      if (!batch) {
        const answer = (result as Array<{ messageId?: string }> | undefined)?.[0];
        if (answer?.messageId) span.setAttribute('messaging.message.id', answer.messageId);
      }
      return result;
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      span.setAttribute('error.type', typeof code === 'string' ? code : ((error as Error)?.name ?? 'Error'));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  }

  /**
   * The entry with `context` in its message attributes: the entry itself where it has a context of
   * its own (or the propagator writes nothing), `undefined` where there is no room for it (10
   * attributes, or its size).
   */
  private withContext<T>(entry: OutgoingEntry<T>, context: Context): OutgoingEntry<T> | undefined {
    const attributes = (entry.entry.MessageAttributes ?? {}) as Record<string, OutgoingAttribute>;
    if (carriesContext(attributes, this.api.propagation.fields())) return entry;
    const carrier: Record<string, string> = {};
    this.api.propagation.inject(context, carrier, SET_STRING);
    const names = Object.keys(carrier);
    if (names.length === 0) return entry;
    if (Object.keys(attributes).length + names.length > MAX_ATTRIBUTES) return undefined;
    let added = 0;
    const written: Record<string, OutgoingAttribute> = { ...attributes };
    for (const name of names) {
      written[name] = { DataType: 'String', StringValue: carrier[name] };
      added += Buffer.byteLength(name) + 'String'.length + Buffer.byteLength(carrier[name]);
    }
    if (entry.size <= MAX_MESSAGE_BYTES && entry.size + added > MAX_MESSAGE_BYTES) return undefined;
    return { ...entry, entry: { ...entry.entry, MessageAttributes: written }, size: entry.size + added };
  }

  private warnOnce(destination: ProducerDestination, skipped: number): void {
    if (this.warned.has(destination.address)) return;
    this.warned.add(destination.address);
    this.logger.warn(
      `${skipped} message(s) to ${destination.address} were sent without their trace context: their own message ` +
        `attributes leave no room for it (SQS takes ${MAX_ATTRIBUTES}). Their consumers' spans will not link to ` +
        'this trace. Send fewer attributes to keep the link (said once per destination).',
    );
  }
}

/** Whether the app put a context of its own on the message (one of the propagator's fields). */
function carriesContext(attributes: Record<string, unknown>, fields: readonly string[]): boolean {
  for (const field of fields) if (attributes[field] !== undefined) return true;
  return false;
}
