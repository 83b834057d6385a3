import type { SqsContext } from '../sqs-context';
import type { SqsQueueRouter, SqsRoute } from './sqs-queue.router';
import type { SqsRecordLike } from '../sqs-record.interface';
import { JSON_BODY_DECODER, ResolvedBodyDecoder, resolveBodyDecoder, toPayload } from '../sqs-body.decoder';
import type { SqsEnvelopeKind, SqsInnerMessage, SqsOpenedMessage } from '../sqs-envelope.interface';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/**
 * A queue's decoding stage: opens its envelopes, routes the message (an envelope's type, or the
 * router's discriminator) and reads it with the routed class's decoder, else the queue's. What is
 * wrong is thrown as its reason; the record is then invalid. A class's own decoder needs its route
 * known before the body is read, else the queue's decoder reads the body first.
 */
export class SqsMessageDecoding {
  /**
   * The envelopes its messages come in, outermost first (none: raw messages; `'auto'`: whichever a body
   * is). The producer refuses to write raw messages to a queue that opens envelopes.
   */
  readonly envelopes: readonly SqsEnvelopeKind[] | 'auto';
  /** The queue's own decoder. */
  readonly defaultDecoder: ResolvedBodyDecoder;
  /** The envelope readers' load, started when a stage that opens envelopes is built; `undefined` for raw messages. */
  private readonly loading: Promise<void> | undefined;
  /** Opens a body's envelopes, once the readers have loaded. */
  private open: ((body: unknown) => SqsOpenedMessage) | undefined;

  /** Throws a sentence naming the queue when an option is unusable. */
  constructor(queue: string, options: { decoder?: unknown; envelope?: unknown }) {
    this.defaultDecoder = resolveBodyDecoder(options.decoder, `SQS queue "${queue}"`);
    const envelopes = resolveEnvelopes(options.envelope, `queue "${queue}"`);
    this.envelopes = envelopes;
    if (envelopes !== 'auto' && envelopes.length === 0) return;
    this.loading = loadEnvelopeOpener().then(({ envelopeOpener }) => {
      this.open = envelopeOpener(envelopes);
    });
    this.loading.catch(() => undefined); // a failed load fails the records that wait for it, as invalid
  }

  /** Whether its messages' envelope names an id, the default key (`'auto'`: whenever it opens one). */
  get namesKey(): boolean {
    return this.envelopes === 'auto' || (this.envelopes.length > 0 && NAMES_KEY[this.envelopes.at(-1)!]);
  }

  /**
   * Decodes one record, setting the envelopes on the context; `{ skip }` when there is nothing to
   * handle. A promise only where a decoder function's answer is, or while the envelope readers load.
   */
  decode(
    record: SqsRecordLike,
    router: SqsQueueRouter,
    context: SqsContext,
  ): SqsDecodedRecord | Promise<SqsDecodedRecord> {
    if (this.open === undefined && this.loading !== undefined) {
      return this.loading.then(() => this.decode(record, router, context));
    }
    const message = this.open?.(record.body); // none for a raw message
    if (message !== undefined && message.envelopes.length > 0) {
      context.envelopes = message.envelopes;
      context.envelopeKey = message.key;
    }
    if (message?.skip !== undefined) {
      context.eventType = message.type;
      return { skip: message.skip };
    }
    const inner = message?.inner ?? { text: record.body };
    const route = router.routeBeforeDecoding(message?.type, context);
    const decoder = route?.decoder ?? this.defaultDecoder;
    const payload = payloadOf(inner, decoder, context);
    return payload instanceof Promise
      ? payload.then((value) => routed(inner, route, decoder, value, router, context))
      : routed(inner, route, decoder, payload, router, context);
  }
}

/** A decoded record: its route and payload, or why it is skipped. */
export type SqsDecodedRecord =
  | { readonly skip: string; readonly route?: undefined; readonly payload?: undefined }
  | { readonly skip?: undefined; readonly route: SqsRoute; readonly payload: Record<string, unknown> };

/** A record's route: the one named before decoding, or the one its payload names. */
function routed(
  inner: SqsInnerMessage,
  route: SqsRoute | undefined,
  decoder: ResolvedBodyDecoder,
  payload: Record<string, unknown>,
  router: SqsQueueRouter,
  context: SqsContext,
): SqsDecodedRecord | Promise<SqsDecodedRecord> {
  if (route !== undefined) return { route, payload };
  const resolved = router.resolve(payload, context);
  if (resolved.decoder === undefined || resolved.decoder === decoder) return { route: resolved, payload };
  const own = payloadOf(inner, resolved.decoder, context);
  return own instanceof Promise
    ? own.then((value) => ({ route: resolved, payload: value }))
    : { route: resolved, payload: own };
}

/** The payload of the message inside, read by `decoder`. */
function payloadOf(
  inner: SqsInnerMessage,
  decoder: ResolvedBodyDecoder,
  context: SqsContext,
): Record<string, unknown> | Promise<Record<string, unknown>> {
  // A value an envelope (or 'auto') already parsed is the payload, unless a non-JSON decoder asks
  // for the text it came from. EventBridge details, CloudEvents data and S3 records have no text.
  if ('value' in inner && (decoder === JSON_BODY_DECODER || inner.text === undefined)) {
    return toPayload(inner.value);
  }
  return decoder.decode(inner.text, context);
}

/** Each envelope a queue may name, and whether it gives the event an id (the default idempotency key). */
const NAMES_KEY: Readonly<Record<SqsEnvelopeKind, boolean>> = {
  sns: false,
  eventbridge: true,
  s3: true,
  cloudevents: true,
};

let loadingOpener: Promise<typeof import('./envelopes/envelope-opener')> | undefined;

/** The envelope readers (`envelopes/`), loaded once, by the first stage that opens envelopes. */
function loadEnvelopeOpener(): Promise<typeof import('./envelopes/envelope-opener')> {
  return (loadingOpener ??= import('./envelopes/envelope-opener'));
}

function resolveEnvelopes(option: unknown, where: string): readonly SqsEnvelopeKind[] | 'auto' {
  if (option === undefined || option === 'none') return [];
  if (option === 'auto') return 'auto';
  const kinds: unknown[] = Array.isArray(option) ? option : [option];
  const known = (kind: unknown) =>
    typeof kind === 'string' && Object.prototype.hasOwnProperty.call(NAMES_KEY, kind);
  if (kinds.length === 0 || !kinds.every(known)) {
    throw new SqsConfigurationError(
      `SQS ${where}: envelope must be 'none', 'auto', 'sns', 'eventbridge', 's3', 'cloudevents' or a list ` +
        `of them, outermost first (e.g. ['sns', 's3']), got ${JSON.stringify(option)}.`,
    );
  }
  return kinds as SqsEnvelopeKind[];
}
