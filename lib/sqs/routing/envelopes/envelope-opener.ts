import { isObject, parseBody } from '../../sqs-body.decoder';
import type {
  SqsEnvelope,
  SqsEnvelopeKind,
  SqsEnvelopeReader,
  SqsOpenedEnvelope,
  SqsOpenedMessage,
} from '../../sqs-envelope.interface';
import { cloudEventsEnvelope } from './cloudevents.envelope';
import { eventBridgeEnvelope } from './eventbridge.envelope';
import { s3Envelope } from './s3.envelope';
import { snsEnvelope } from './sns.envelope';

/**
 * The envelope readers, behind one function: loaded by `sqs-message.decoding.ts` only where a queue
 * opens envelopes, so an app of raw messages never loads them.
 */

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

/** Opens a body's envelopes, `kinds` outermost first (checked by the decoding stage); throws the reason when it cannot. */
export function envelopeOpener(
  kinds: readonly SqsEnvelopeKind[] | 'auto',
): (body: unknown) => SqsOpenedMessage {
  if (kinds === 'auto') return openAuto;
  const readers = kinds.map((kind) => READERS[kind]);
  return (body) => openChain(body, readers);
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
