import type { SqsContext } from '../sqs-context';
import type { SqsQueueRouter, SqsRoute } from './sqs-queue.router';
import type { SqsRecordLike } from '../sqs-record.interface';
import {
  isObject,
  JSON_BODY_DECODER,
  parseBody,
  ResolvedBodyDecoder,
  resolveBodyDecoder,
  toPayload,
} from '../sqs-body.decoder';
import type {
  SqsEnvelope,
  SqsEnvelopeKind,
  SqsEnvelopeReader,
  SqsInnerMessage,
  SqsOpenedEnvelope,
} from '../sqs-envelope.interface';
import { cloudEventsEnvelope } from './envelopes/cloudevents.envelope';
import { eventBridgeEnvelope } from './envelopes/eventbridge.envelope';
import { s3Envelope } from './envelopes/s3.envelope';
import { snsEnvelope } from './envelopes/sns.envelope';
import { SqsConfigurationError } from '../../common/sqs-idempotency.error';

/**
 * A queue's decoding stage: opens its envelopes, routes the message (an envelope's type, or the
 * router's discriminator) and reads it with the routed class's decoder, else the queue's. What is
 * wrong is thrown as its reason; the record is then invalid. A class's own decoder needs its route
 * known before the body is read, else the queue's decoder reads the body first.
 */
export class SqsMessageDecoding {
  private readonly readers: readonly SqsEnvelopeReader[] | 'auto';
  /** The queue's own decoder. */
  readonly defaultDecoder: ResolvedBodyDecoder;

  /** Throws a sentence naming the queue when an option is unusable. */
  constructor(queue: string, options: { decoder?: unknown; envelope?: unknown }) {
    this.defaultDecoder = resolveBodyDecoder(options.decoder, `SQS queue "${queue}"`);
    this.readers = resolveEnvelopes(options.envelope, `queue "${queue}"`);
  }

  /** Whether the queue opens envelopes (the producer refuses to write raw messages to such a queue). */
  get envelopes(): readonly SqsEnvelopeKind[] | 'auto' {
    return this.readers === 'auto' ? 'auto' : this.readers.map((reader) => reader.kind);
  }

  /** Whether its messages' envelope names an id, the default key (`'auto'`: whenever it opens one). */
  get namesKey(): boolean {
    return this.readers === 'auto' || this.readers.at(-1)?.namesKey === true;
  }

  /**
   * Decodes one record, setting the envelopes on the context; `{ skip }` when there is nothing to
   * handle. A promise only where a decoder function's answer is.
   */
  decode(
    record: SqsRecordLike,
    router: SqsQueueRouter,
    context: SqsContext,
  ): SqsDecodedRecord | Promise<SqsDecodedRecord> {
    const message = this.open(record.body);
    if (message.envelopes.length > 0) {
      context.envelopes = message.envelopes;
      context.envelopeKey = message.key;
    }
    if (message.skip !== undefined) {
      context.eventType = message.type;
      return { skip: message.skip };
    }
    const route = router.routeBeforeDecoding(message.type, context);
    const decoder = route?.decoder ?? this.defaultDecoder;
    const payload = payloadOf(message.inner, decoder, context);
    return payload instanceof Promise
      ? payload.then((value) => routed(message.inner, route, decoder, value, router, context))
      : routed(message.inner, route, decoder, payload, router, context);
  }

  /** Opens the envelopes of a body (none for a raw message); throws the reason when it cannot. */
  open(body: unknown): SqsOpenedMessage {
    if (this.readers === 'auto') return openAuto(body);
    if (this.readers.length === 0) return { inner: { text: body as string }, envelopes: NO_ENVELOPES };
    return openChain(body, this.readers);
  }
}

/** A body whose envelopes are open: what the innermost said, and every envelope, outermost first (none for a raw message). */
export interface SqsOpenedMessage extends Omit<SqsOpenedEnvelope, 'envelope'> {
  readonly envelopes: readonly SqsEnvelope[];
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

const NO_ENVELOPES: readonly SqsEnvelope[] = Object.freeze([]);
const READERS: Record<SqsEnvelopeKind, SqsEnvelopeReader> = {
  sns: snsEnvelope,
  eventbridge: eventBridgeEnvelope,
  s3: s3Envelope,
  cloudevents: cloudEventsEnvelope,
};
/** What `'auto'` looks for inside an SNS notification (an SNS topic never delivers to another one). */
const INSIDE_SNS: readonly SqsEnvelopeReader[] = [eventBridgeEnvelope, s3Envelope, cloudEventsEnvelope];
const AUTO: readonly SqsEnvelopeReader[] = [snsEnvelope, ...INSIDE_SNS];

function resolveEnvelopes(option: unknown, where: string): readonly SqsEnvelopeReader[] | 'auto' {
  if (option === undefined || option === 'none') return [];
  if (option === 'auto') return 'auto';
  const kinds = Array.isArray(option) ? option : [option];
  const readers = kinds.map((kind) =>
    typeof kind === 'string' && Object.prototype.hasOwnProperty.call(READERS, kind)
      ? READERS[kind as SqsEnvelopeKind]
      : undefined,
  );
  if (readers.length === 0 || readers.some((reader) => reader === undefined)) {
    throw new SqsConfigurationError(
      `SQS ${where}: envelope must be 'none', 'auto', 'sns', 'eventbridge', 's3', 'cloudevents' or a list ` +
        `of them, outermost first (e.g. ['sns', 's3']), got ${JSON.stringify(option)}.`,
    );
  }
  return readers as SqsEnvelopeReader[];
}

function openChain(body: unknown, readers: readonly SqsEnvelopeReader[]): SqsOpenedMessage {
  let last = readers[0].open(parseEnvelopeBody(body, readers[0].kind));
  const envelopes = [last.envelope];
  for (let i = 1; i < readers.length && last.skip === undefined; i++) {
    last = readers[i].open(innerObject(last, readers[i].kind));
    envelopes.push(last.envelope);
  }
  return { ...last, envelopes };
}

function openAuto(body: unknown): SqsOpenedMessage {
  const parsed = tryParseObject(body);
  if (parsed === undefined) return { inner: { text: body as string }, envelopes: NO_ENVELOPES };
  const outer = AUTO.find((reader) => reader.recognizes(parsed));
  if (outer === undefined) return { inner: { text: body as string, value: parsed }, envelopes: NO_ENVELOPES };
  const first = outer.open(parsed);
  if (outer !== snsEnvelope || first.inner.text === undefined)
    return { ...first, envelopes: [first.envelope] };
  const innerParsed = tryParseObject(first.inner.text);
  const inner = innerParsed && INSIDE_SNS.find((reader) => reader.recognizes(innerParsed));
  if (!inner) return { ...first, envelopes: [first.envelope] };
  const second = inner.open(innerParsed!);
  return { ...second, envelopes: [first.envelope, second.envelope] };
}

/** The body of an envelope, parsed: it must be a JSON object. */
function parseEnvelopeBody(body: unknown, kind: SqsEnvelopeKind): Record<string, unknown> {
  try {
    return parseBody(body);
  } catch (error) {
    throw new Error(`${(error as Error).message}, and the queue takes ${describeKind(kind)} envelopes`);
  }
}

/** The message inside `opened`, as the object the next envelope must be. */
function innerObject(opened: SqsOpenedEnvelope, next: SqsEnvelopeKind): Record<string, unknown> {
  const { text, value } = opened.inner;
  if (text !== undefined) return parseEnvelopeBody(text, next);
  if (isObject(value)) return value;
  throw new Error(`the ${opened.envelope.kind} envelope holds no ${describeKind(next)} envelope`);
}

function tryParseObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    return parseBody(text);
  } catch {
    return undefined;
  }
}

function describeKind(kind: SqsEnvelopeKind): string {
  return { sns: 'SNS', eventbridge: 'EventBridge', s3: 'S3', cloudevents: 'CloudEvents' }[kind];
}
