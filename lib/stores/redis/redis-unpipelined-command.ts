import { optionalPeer } from '../../common/optional-peer';
import type { RedisScriptClient } from './redis-connection';

/** Sends one command and answers its reply. */
export type SendCommand = (name: string, args: Array<string | Buffer | number>) => Promise<unknown>;

/**
 * How the store's batch scripts reach Redis when the client auto-pipelines: as a command of their
 * own, written at once, rather than through ioredis's auto-pipeline.
 *
 * Why: with `enableAutoPipelining` (as `recommendedIoRedisOptions` sets), ioredis gathers the
 * commands of a turn of the event loop into a `Pipeline`, writes it on a later `setImmediate`, and
 * serves one such pipeline per connection at a time: what is issued while one is in flight waits
 * for its reply. A batch script is already one command for a whole turn of claims (or
 * completions), gathered by the module itself; through the auto-pipeline it would pay for a
 * `Pipeline` object, a further turn, and the wait behind the pipeline in flight. Written directly,
 * it leaves as soon as it is built. Measured on whole Lambda batches (8 invocations in flight, one
 * process, both paths side by side): a tenth more duplicates and a sixth more first sightings per
 * second, at 10 to 18% less CPU per record (bench/PROFILE.md).
 *
 * Order is unchanged where it matters: every command of one key is issued after the answer of the
 * one before it (a claim, then its completion), and a connection answers in the order it is written.
 *
 * Any other client (no auto-pipelining, or not ioredis) answers `undefined`: its own methods
 * already send each command as it is issued.
 */
export async function unpipelinedSenderFor(client: RedisScriptClient): Promise<SendCommand | undefined> {
  const ioredis = client as AutoPipeliningClient;
  const sendCommand = ioredis.sendCommand;
  if (ioredis.options?.enableAutoPipelining !== true || typeof sendCommand !== 'function') return undefined;
  const Command = await loadCommand().catch(() => undefined);
  if (!Command) return undefined;
  // What ioredis's own command methods pass (Commander's `generateFunction`): the client's key
  // prefix (prepended to the keys a command names), and replies decoded as UTF-8.
  const options = { keyPrefix: ioredis.options.keyPrefix, replyEncoding: 'utf8' };
  return (name, args) => sendCommand.call(ioredis, new Command(name, args, options));
}

/** The parts of an ioredis `Redis` or `Cluster` this reads (structural: ioredis stays optional). */
interface AutoPipeliningClient {
  options?: { enableAutoPipelining?: boolean; keyPrefix?: string };
  sendCommand?(command: unknown): Promise<unknown>;
}

type CommandClass = new (
  name: string,
  args: Array<string | Buffer | number>,
  options: { keyPrefix?: string; replyEncoding: string },
) => unknown;

// ioredis is installed wherever an ioredis client exists; loaded once, on the first batch call.
const loadCommand = async (): Promise<CommandClass> =>
  (await loadIoRedisForCommands()).Command as unknown as CommandClass;

const loadIoRedisForCommands = optionalPeer(
  'ioredis',
  'RedisIdempotencyStore (batch calls on an auto-pipelining client)',
  () => import('ioredis'),
);
