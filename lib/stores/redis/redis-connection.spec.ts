import { Cluster, Redis } from 'ioredis';
import { captureLogs } from '../../../test/support/captured-logs';
import { RedisConnection } from './redis-connection';

afterEach(() => jest.restoreAllMocks());

describe('RedisConnection.failure for a command that timed out', () => {
  // Neither client connects (lazyConnect): the wording reads the client's own options.
  const timedOut = new Error('Command timed out');

  it("names a Redis client's commandTimeout", async () => {
    const redis = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, commandTimeout: 250 });
    const connection = new RedisConnection(redis, { serverCheck: 'off' });
    captureLogs();
    try {
      expect(connection.failure(timedOut).message).toBe(
        'RedisIdempotencyStore: Redis at 127.0.0.1:1 did not answer within 250 ms (a hung or overloaded server?)',
      );
    } finally {
      await connection.close();
      redis.disconnect();
    }
  });

  it("names a Cluster's commandTimeout, which it keeps in redisOptions", async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
      redisOptions: { commandTimeout: 300 },
    });
    const connection = new RedisConnection(cluster, { serverCheck: 'off' });
    const lines = captureLogs();
    try {
      expect(connection.failure(timedOut).message).toBe(
        'RedisIdempotencyStore: Redis at the cluster 127.0.0.1:1 did not answer within 300 ms (a hung or overloaded server?)',
      );
      expect(lines).toContainEqual(expect.stringContaining('is unreachable (no answer within 300 ms)'));
    } finally {
      await connection.close();
      cluster.disconnect();
    }
  });
});
