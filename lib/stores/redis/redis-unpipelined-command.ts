import { loadIoRedis, RedisScriptClient } from './redis-connection';

/** Sends one command and answers its reply. */
export type SendCommand = (name: string, args: Array<string | Buffer | number>) => Promise<unknown>;

/**
 * The batch scripts reach Redis as commands of their own, written at once, not through ioredis's
 * auto-pipeline (which would wait for the pipeline in flight): `bench/PROFILE.md`, "Batch calls past
 * ioredis's auto-pipeline". Order holds: a key's commands go one after the other's answer. Any other
 * client answers `undefined`.
 */
export async function unpipelinedSenderFor(client: RedisScriptClient): Promise<SendCommand | undefined> {
  const ioredis = client as AutoPipeliningClient;
  const sendCommand = ioredis.sendCommand;
  if (ioredis.options?.enableAutoPipelining !== true || typeof sendCommand !== 'function') return undefined;
  // ioredis is installed wherever an ioredis client exists.
  const Command = (await loadIoRedis().catch(() => undefined))?.Command as unknown as
    CommandClass | undefined;
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
