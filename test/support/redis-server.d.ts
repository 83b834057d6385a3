export interface RedisServerHandle {
  port: number;
  url: string;
  pid: number;
  stop(): Promise<void>;
}
export function startRedisServer(options?: { port?: number; args?: string[] }): Promise<RedisServerHandle>;
export function freePort(): Promise<number>;
/** The binary cannot be started at all (not installed). */
export class RedisServerMissingError extends Error {
  readonly reason: string;
}
/** The binary tests start: REDIS_SERVER_BIN, else `redis-server` from the PATH. */
export const REDIS_SERVER_BIN: string;
