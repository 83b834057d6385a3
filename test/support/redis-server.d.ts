export interface RedisServerHandle {
  port: number;
  url: string;
  pid: number;
  stop(): Promise<void>;
}
export function startRedisServer(options?: { port?: number; args?: string[] }): Promise<RedisServerHandle>;
export function freePort(): Promise<number>;
