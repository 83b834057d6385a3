import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { freePort, startRedisServer } from '../../../test/support/redis-server';
import { describeIdempotencyStore } from '../../testing';
import { AcquireResult } from '../idempotency-store.interface';
import { RedisIdempotencyStore } from './redis-idempotency.store';
import type { RedisScriptClient } from './redis-connection';
import { ACQUIRE_MANY } from './redis-idempotency.scripts';
import { requires } from '../../../test/support/prerequisites';
import { waitFor } from '../../../test/support/wait-for';

const withRedis = requires('redis-server');

// The private redis-server the Jest global setup started (never a Redis the suite did not start).
const REDIS_URL = process.env.REDIS_URL!;

/** A store over a fresh client, with three more clients racing it in the atomicity cases. */
function redisFixture(options: { compactKeys?: boolean } = {}) {
  const clients = [0, 1, 2, 3].map(() => new Redis(REDIS_URL));
  const [store, ...peers] = clients.map((client) => new RedisIdempotencyStore(client, options));
  return {
    store,
    peers,
    dispose: async () => {
      await Promise.all(clients.map((client) => client.quit()));
    },
  };
}

describeIdempotencyStore('RedisIdempotencyStore', () => redisFixture(), { runner: withRedis.runner });
describeIdempotencyStore('RedisIdempotencyStore (compactKeys)', () => redisFixture({ compactKeys: true }), {
  runner: withRedis.runner,
});

withRedis.describe('RedisIdempotencyStore in Redis', () => {
  let redis: Redis;
  let store: RedisIdempotencyStore;
  const key = () => `redis-store-spec:${randomUUID()}`;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    store = new RedisIdempotencyStore(redis);
  });
  afterEach(async () => {
    await redis.quit();
  });

  it('holds the token while in progress, then "1" with the ttl as its PX expiry', async () => {
    const k = key();
    await store.tryAcquire(k, 30_000, 'token-a');
    expect(await redis.get(k)).toBe('token-a');
    const lease = await redis.pttl(k);
    expect(lease).toBeGreaterThan(29_000);
    expect(lease).toBeLessThanOrEqual(30_000);
    await store.markComplete(k, 86_400_000, 'token-a');
    expect(await redis.get(k)).toBe('1');
    expect(await redis.pttl(k)).toBeGreaterThan(86_000_000);
  });

  it('rounds a sub-millisecond TTL up to 1 ms (never to PX 0, "no expiry") and gives ttl Infinity no expiry at all', async () => {
    // PTTL answers -1 for a key without expiry and -2 once it is gone: a 1 ms key is 1, 0 or -2 by now.
    const lease = key();
    await store.tryAcquire(lease, 0.2, 'token-a');
    expect([1, 0, -2]).toContain(await redis.pttl(lease));
    const completed = key();
    await store.tryAcquire(completed, 30_000, 'token-b');
    expect(await store.markComplete(completed, 0.2, 'token-b')).toBe(true);
    expect([1, 0, -2]).toContain(await redis.pttl(completed));
    const extended = key();
    await store.tryAcquire(extended, 30_000, 'token-c');
    expect(await store.extend(extended, 0.2, 'token-c')).toBe(true);
    expect([1, 0, -2]).toContain(await redis.pttl(extended));
    await waitFor(
      async () => (await redis.exists(lease, completed, extended)) === 0,
      2_000,
      'the three keys written with a 0.2 ms TTL to expire',
    );
    const forever = key();
    await store.tryAcquire(forever, 1_000, 'token-b');
    await store.markComplete(forever, Infinity, 'token-b');
    expect(await redis.pttl(forever)).toBe(-1);
    const persisted = key();
    await store.tryAcquire(persisted, 1_000, 'token-c');
    expect(await store.extend(persisted, Infinity, 'token-c')).toBe(true);
    expect(await redis.pttl(persisted)).toBe(-1);
  });

  it('refuses a TTL that is not positive, and "1" or a space in a token or fingerprint, before any round trip', async () => {
    const k = key();
    await expect(store.tryAcquire(k, 0, 'token-a')).rejects.toThrow(/positive number of milliseconds, got 0/);
    await expect(store.markComplete(k, Number.NaN, 'token-a')).rejects.toThrow(/got NaN/);
    await expect(store.tryAcquire(k, 1_000, '1')).rejects.toThrow(/cannot be "1" .* or hold a space/);
    await expect(store.tryAcquire(k, 1_000, 'token a')).rejects.toThrow(/got "token a"/);
    await expect(store.tryAcquire(k, 1_000, 'token-a', { fingerprint: 'f p' })).rejects.toThrow(
      /fingerprint must be a non-empty string without spaces/,
    );
    expect(await redis.exists(k)).toBe(0);
  });

  it('uses the module’s keys as they are, and a 12-byte digest with compactKeys', async () => {
    const k = key();
    expect(store.redisKey(k)).toBe(k);
    const compact = new RedisIdempotencyStore(redis, { compactKeys: true });
    const digest = compact.redisKey(k) as Buffer;
    expect(digest).toHaveLength(12);
    await compact.tryAcquire(k, 30_000, 'token-a');
    expect(await redis.exists(k)).toBe(0);
    expect(await redis.get(digest)).toBe('token-a');
    expect(await compact.tryAcquire(k, 30_000, 'token-b')).toBe(AcquireResult.IN_PROGRESS);
  });

  it('honours the client’s own keyPrefix', async () => {
    const prefixed = new Redis(REDIS_URL, { keyPrefix: 'tenant-a:' });
    try {
      const k = key();
      await new RedisIdempotencyStore(prefixed).tryAcquire(k, 30_000, 'token-a');
      expect(await redis.get(`tenant-a:${k}`)).toBe('token-a');
    } finally {
      await prefixed.quit();
    }
  });
});

/**
 * Performance contracts: these pin Redis internals (the commands MONITOR sees, `INFO commandstats`,
 * `OBJECT ENCODING`), not behaviour a caller could observe through the store's answers. They fail when
 * a change costs round trips or memory per key; such a change may still be correct, but it must be
 * deliberate (and measured with `npm run bench`).
 */
withRedis.describe('RedisIdempotencyStore performance contracts (round trips, memory per key)', () => {
  it('stores a completed key as a shared integer: no value allocation, no JSON', async () => {
    const redis = new Redis(REDIS_URL);
    const store = new RedisIdempotencyStore(redis);
    const k = `redis-store-spec:${randomUUID()}`;
    try {
      await store.tryAcquire(k, 30_000, 'token-a');
      await store.markComplete(k, 60_000, 'token-a');
      expect(await redis.object('ENCODING', k)).toBe('int');
    } finally {
      await redis.quit();
    }
  });

  // A private server, so that MONITOR sees this test's commands only.
  it('spends one command per call (a claim is SET, the rest EVALSHA); a server sees each script in full (EVAL) once', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    const admin = new Redis(server.url);
    const monitor = await admin.monitor(); // a second connection of its own
    try {
      const sent: string[] = [];
      // Commands a script runs inside Redis are reported with source "lua"; those are not round trips.
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source !== 'lua') sent.push(args[0].toLowerCase());
      });
      const store = new RedisIdempotencyStore(redis);
      const calls = 20;
      for (let i = 0; i < calls; i++) {
        const k = `k${i}`;
        await store.tryAcquire(k, 30_000, 't');
        await store.extend(k, 30_000, 't');
        if (i % 2 === 0) await store.markComplete(k, 60_000, 't');
        else await store.forget(k, 't');
      }
      await redis.ping(); // MONITOR lags the replies: wait for a marker after the last call
      await waitFor(() => sent.at(-1) === 'ping', 30_000, 'MONITOR to report the marker PING');
      sent.pop();
      // Every claim is one SET (NX GET) and every other call one EVALSHA; the very first call of
      // each of the three scripts on this fresh server met NOSCRIPT and was followed by one EVAL,
      // which cached the script server-wide.
      expect(sent.filter((name) => name === 'set')).toHaveLength(calls);
      expect(sent.filter((name) => name === 'evalsha')).toHaveLength(calls * 2);
      expect(sent.filter((name) => name === 'eval')).toHaveLength(3);
      expect(sent).toHaveLength(calls * 3 + 3);

      // Another connection (another instance of the app) finds them cached: EVALSHA only.
      const other = new Redis(server.url);
      try {
        const settled = async () => {
          await redis.ping();
          await waitFor(() => sent.at(-1) === 'ping', 30_000, 'MONITOR to report the marker PING');
          return sent.length;
        };
        await other.ping(); // connected (and its handshake seen) before counting
        const before = await settled();
        await new RedisIdempotencyStore(other).markComplete('other', 30_000, 't');
        await settled();
        expect(sent.slice(before, -1)).toEqual(['evalsha']);
      } finally {
        other.disconnect();
      }
    } finally {
      monitor.disconnect();
      admin.disconnect();
      redis.disconnect();
      await server.stop();
    }
  });

  it('keeps a fingerprint after the token, then after "1", and answers it from the one SET of the claim', async () => {
    const server = await startRedisServer(); // private: its command statistics are this test's own
    const own = new Redis(server.url);
    /** The claim's answer, checking that it was one plain SET: no script, no read, no other round trip. */
    const oneSet = async <T>(claim: () => Promise<T>): Promise<T> => {
      await own.config('RESETSTAT');
      const answer = await claim();
      const stats = await own.info('commandstats');
      expect(stats).toMatch(/^cmdstat_set:calls=1,/m);
      expect(stats).not.toMatch(/^cmdstat_(eval|evalsha|get):/m);
      return answer;
    };
    try {
      const fingerprinted = new RedisIdempotencyStore(own);
      const claim = { fingerprint: 'Zm9vYmFyYmF6cXV4', messageId: 'message-1' };
      expect(await oneSet(() => fingerprinted.tryAcquire('k', 30_000, 'token-a', claim))).toBe(
        AcquireResult.ACQUIRED,
      );
      expect(await own.get('k')).toBe('token-a Zm9vYmFyYmF6cXV4 message-1');
      const copy = { fingerprint: 'b', messageId: 'm2' };
      expect(await oneSet(() => fingerprinted.tryAcquire('k', 30_000, 'token-b', copy))).toEqual({
        result: AcquireResult.IN_PROGRESS,
        ...claim,
      });
      expect(await fingerprinted.markComplete('k', 86_400_000, 'token-a')).toBe(true);
      expect(await own.get('k')).toBe('1 Zm9vYmFyYmF6cXV4 message-1');
      expect(await own.pttl('k')).toBeGreaterThan(86_000_000);
      expect(await oneSet(() => fingerprinted.tryAcquire('k', 30_000, 'token-c'))).toBe(
        AcquireResult.COMPLETED,
      );
      const same = { fingerprint: claim.fingerprint };
      expect(await oneSet(() => fingerprinted.tryAcquire('k', 30_000, 'token-d', same))).toEqual({
        result: AcquireResult.COMPLETED,
        ...claim,
      });
      // A key claimed without a fingerprint holds what it always did.
      await fingerprinted.tryAcquire('plain', 30_000, 'token-e');
      expect(await own.get('plain')).toBe('token-e');
      await fingerprinted.markComplete('plain', 86_400_000, 'token-e');
      expect(await own.get('plain')).toBe('1');
      expect(await own.object('ENCODING', 'plain')).toBe('int');
    } finally {
      own.disconnect();
      await server.stop();
    }
  });

  it('reloads its scripts after the server forgot them (NOSCRIPT)', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    try {
      const store = new RedisIdempotencyStore(redis);
      expect(await store.tryAcquire('a', 30_000, 't')).toBe(AcquireResult.ACQUIRED);
      await redis.script('FLUSH');
      expect(await store.tryAcquire('a', 30_000, 'u')).toBe(AcquireResult.IN_PROGRESS);
      expect(await store.markComplete('a', 30_000, 't')).toBe(true);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});

withRedis.describe('RedisIdempotencyStore batch methods', () => {
  it('claims a key given twice in one batch with ttl Infinity once: the second entry never overwrites the first', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const store = new RedisIdempotencyStore(redis);
      const k = `redis-batch-spec:${randomUUID()}`;
      const claims = [
        { key: k, ttlMs: Infinity, token: 'token-a' },
        { key: k, ttlMs: Infinity, token: 'token-b' },
      ];
      expect(await store.tryAcquireMany(claims)).toEqual([AcquireResult.ACQUIRED, AcquireResult.IN_PROGRESS]);
      expect(await redis.get(k)).toBe('token-a');
      expect(await redis.pttl(k)).toBe(-1);
    } finally {
      await redis.quit();
    }
  });

  // A private server, so that MONITOR sees this test's commands only.
  it('claims and completes a batch of keys in one command each, the keys decided inside the script', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    const admin = new Redis(server.url);
    const monitor = await admin.monitor();
    try {
      const sent: string[][] = [];
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source !== 'lua') sent.push(args);
      });
      const store = new RedisIdempotencyStore(redis);
      await store.tryAcquire('warm', 30_000, 'w'); // connected, and the handshake seen, before counting
      await store.markCompleteMany([{ key: 'warm', ttlMs: 30_000, token: 'w' }]); // loads the script (EVAL)
      await store.tryAcquireMany([{ key: 'warm', ttlMs: 30_000, token: 'w' }]);
      const settled = async () => {
        await redis.ping();
        await waitFor(
          () => sent.at(-1)?.[0].toLowerCase() === 'ping',
          2_000,
          'MONITOR to report the marker PING',
        );
        return sent.length;
      };
      const before = await settled();
      const keys = Array.from({ length: 10 }, (_, i) => `batch:${i}`);
      const claims = keys.map((key, i) => ({ key, ttlMs: 30_000, token: `t${i}` }));
      expect(await store.tryAcquireMany(claims)).toEqual(Array(10).fill(AcquireResult.ACQUIRED));
      expect(await store.markCompleteMany(claims.map((claim) => ({ ...claim, ttlMs: 60_000 })))).toEqual(
        Array(10).fill(true),
      );
      await settled();
      const batch = sent.slice(before, -1);
      expect(batch.map((args) => args[0].toLowerCase())).toEqual(['evalsha', 'evalsha']);
      // EVALSHA sha 10 k0..k9 then token and TTL per key.
      expect(batch[0].slice(2, 13)).toEqual(['10', ...keys]);
      expect(batch[0].slice(13, 15)).toEqual(['t0', '30000']);
      for (const key of keys) {
        expect(await redis.get(key)).toBe('1');
        expect(await redis.pttl(key)).toBeGreaterThan(59_000);
      }
    } finally {
      monitor.disconnect();
      admin.disconnect();
      redis.disconnect();
      await server.stop();
    }
  });

  it("sends a batch past an auto-pipelining client's pipeline, under the client's key prefix", async () => {
    const server = await startRedisServer();
    const client = new Redis(server.url, { enableAutoPipelining: true, keyPrefix: 'app:' });
    const redis = new Redis(server.url);
    try {
      const store = new RedisIdempotencyStore(client);
      expect(await store.tryAcquire('single', 30_000, 't')).toBe(AcquireResult.ACQUIRED);
      const pipelines = jest.spyOn(client, 'pipeline');
      const claims = ['single', 'a', 'b'].map((key) => ({ key, ttlMs: 30_000, token: 'u' }));
      // The prefix applies alike to single and batch calls: the batch sees the single claim.
      expect(await store.tryAcquireMany(claims)).toEqual([
        AcquireResult.IN_PROGRESS,
        AcquireResult.ACQUIRED,
        AcquireResult.ACQUIRED,
      ]);
      expect(await store.markCompleteMany(claims.slice(1))).toEqual([true, true]);
      expect(pipelines).not.toHaveBeenCalled(); // each batch went out as a command of its own
      expect(await redis.mget('app:single', 'app:a', 'app:b', 'a')).toEqual(['t', '1', '1', null]);
      // Single calls still ride the auto-pipeline.
      expect(await store.markComplete('single', 30_000, 't')).toBe(true);
      expect(pipelines).toHaveBeenCalled();
    } finally {
      client.disconnect();
      redis.disconnect();
      await server.stop();
    }
  });

  it('decides a batch of claims from one MGET, reading again only a key the call itself claimed (SET NX, on every server)', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    try {
      // Every state a key can be in when claimed, each with a lease and without expiry.
      const held: Record<string, string | undefined> = {
        absent: undefined,
        claimed: 'other-token',
        completed: '1',
        completedWithFingerprint: '1 Zm9vYmFyYmF6cXV4 message-1',
        claimedWithFingerprint: 'other-token Zm9vYmFyYmF6cXV4',
      };
      const keys = Object.keys(held).flatMap((state) => [`${state}:px`, `${state}:none`]);
      for (const key of keys) {
        const value = held[key.split(':')[0]];
        if (value !== undefined) await redis.set(key, value);
      }
      // The first key again at the end: absent when the script read it, claimed by then.
      const claimed = [...keys, 'absent:px'];
      const args = claimed.flatMap((key) => ['token', key.endsWith(':px') ? '30000' : '0']);
      await redis.config('RESETSTAT');
      const answers = await redis.eval(ACQUIRE_MANY.lua, claimed.length, ...claimed, ...args);
      const stats = await redis.info('commandstats');
      expect(answers).toEqual([0, 0, 2, 2, 1, 1, 1, 1, 2, 2, 2]);
      expect(await redis.mget(...claimed)).toEqual([
        'token',
        'token',
        ...keys.slice(2).map((key) => held[key.split(':')[0]]),
        'token',
      ]);
      const leases = await Promise.all(claimed.map((key) => redis.pttl(key)));
      expect(leases.slice(0, 2).map((ms) => ms > 29_000)).toEqual([true, false]);
      // Held keys were answered from the one MGET; the one GET is the repeated key's, whose SET NX was refused.
      expect(stats).toMatch(/cmdstat_mget:calls=1,/);
      expect(stats).toMatch(/cmdstat_get:calls=1,/);
      expect(stats).toMatch(/cmdstat_set:calls=3,/);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });

  it('reloads its batch scripts after the server forgot them (NOSCRIPT)', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    try {
      const store = new RedisIdempotencyStore(redis);
      const claims = [
        { key: 'a', ttlMs: 30_000, token: 't' },
        { key: 'b', ttlMs: 30_000, token: 't' },
      ];
      expect(await store.tryAcquireMany(claims)).toEqual([AcquireResult.ACQUIRED, AcquireResult.ACQUIRED]);
      await redis.script('FLUSH');
      expect(await store.markCompleteMany(claims)).toEqual([true, true]);
      await redis.script('FLUSH');
      expect(await store.tryAcquireMany(claims)).toEqual([AcquireResult.COMPLETED, AcquireResult.COMPLETED]);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });

  it('refuses a bad token or TTL anywhere in a batch before any key is written', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const store = new RedisIdempotencyStore(redis);
      const first = `redis-batch-refused:${randomUUID()}`;
      for (const bad of [
        { key: 'x', ttlMs: 30_000, token: '1' },
        { key: 'x', ttlMs: 30_000, token: 'a b' },
        { key: 'x', ttlMs: 0, token: 't' },
      ]) {
        await expect(store.tryAcquireMany([{ key: first, ttlMs: 30_000, token: 't' }, bad])).rejects.toThrow(
          /RedisIdempotencyStore: a (token|TTL)/,
        );
        await expect(
          store.markCompleteMany([{ key: first, ttlMs: 30_000, token: 't' }, bad]),
        ).rejects.toThrow(/RedisIdempotencyStore: a (token|TTL)/);
      }
      expect(await redis.exists(first)).toBe(0);
      await expect(store.tryAcquireMany('nope' as never)).rejects.toThrow(
        /tryAcquireMany: expected an array/,
      );
    } finally {
      await redis.quit();
    }
  });

  it('splits a batch past 500 keys into several script calls, answered in order', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const store = new RedisIdempotencyStore(redis);
      const prefix = `redis-batch-large:${randomUUID()}`;
      const claims = Array.from({ length: 1_201 }, (_, i) => ({
        key: `${prefix}:${i}`,
        ttlMs: 30_000,
        token: `t${i}`,
      }));
      // Every other key already completed: the answers must come back in the batch's order.
      for (let i = 0; i < claims.length; i += 2) await redis.set(claims[i].key, '1', 'PX', 30_000);
      const answers = await store.tryAcquireMany(claims);
      expect(answers).toEqual(
        claims.map((_, i) => (i % 2 === 0 ? AcquireResult.COMPLETED : AcquireResult.ACQUIRED)),
      );
      expect(await redis.get(claims[1_199].key)).toBe('t1199');
    } finally {
      await redis.quit();
    }
  });
});

withRedis.describe('RedisIdempotencyStore on servers before Redis 7.0', () => {
  // Redis 6 cannot be installed here (Debian ships 7.0), so a client that answers `SET ... NX GET`
  // the way Redis 6.x does (a syntax error, key untouched) stands in for one; every other command
  // reaches the real server.
  function redis6Client(redis: Redis) {
    const refusedSets: unknown[][] = [];
    const client: RedisScriptClient = {
      set: async (...args: unknown[]) => {
        refusedSets.push(args);
        throw new Error('ERR syntax error');
      },
      evalsha: (...args) => redis.evalsha(...(args as [string, number])),
      eval: (...args) => redis.eval(...(args as [string, number])),
      get status() {
        return redis.status;
      },
      quit: () => redis.quit(),
      disconnect: () => redis.disconnect(),
      once: (event, listener) => redis.once(event, listener),
    };
    return { client, refusedSets };
  }

  it('claims through the ACQUIRE script after the first refusal, with the same three answers', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const { client, refusedSets } = redis6Client(redis);
      const store = new RedisIdempotencyStore(client);
      const k = `redis6:${randomUUID()}`;
      expect(await store.tryAcquire(k, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
      expect(await redis.get(k)).toBe('token-a');
      expect(await store.tryAcquire(k, 30_000, 'token-b')).toBe(AcquireResult.IN_PROGRESS);
      expect(await store.markComplete(k, 60_000, 'token-a')).toBe(true);
      expect(await store.tryAcquire(k, 30_000, 'token-c')).toBe(AcquireResult.COMPLETED);
      expect(await store.tryAcquire(`redis6:${randomUUID()}`, Infinity, 'token-d')).toBe(
        AcquireResult.ACQUIRED,
      );
      expect(refusedSets).toHaveLength(1); // asked once; every later claim went straight to the script
    } finally {
      await redis.quit();
    }
  });

  it("gives a claim through the script its lease (a crashed worker's claim expires), ttl Infinity none, and never takes a held key", async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const store = new RedisIdempotencyStore(redis6Client(redis).client);
      const leased = `redis6:${randomUUID()}`;
      expect(await store.tryAcquire(leased, 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
      const lease = await redis.pttl(leased);
      expect(lease).toBeGreaterThan(29_000);
      expect(lease).toBeLessThanOrEqual(30_000);
      const kept = `redis6:${randomUUID()}`;
      expect(await store.tryAcquire(kept, Infinity, 'token-b')).toBe(AcquireResult.ACQUIRED);
      expect(await redis.pttl(kept)).toBe(-1);
      expect(await store.tryAcquire(kept, Infinity, 'token-c')).toBe(AcquireResult.IN_PROGRESS);
      expect(await redis.get(kept)).toBe('token-b');
    } finally {
      await redis.quit();
    }
  });

  it('claims with a fingerprint through the same script, and answers the one the key holds', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const store = new RedisIdempotencyStore(redis6Client(redis).client);
      const k = `redis6:${randomUUID()}`;
      const claim = { fingerprint: 'Zm9vYmFyYmF6cXV4', messageId: 'message-1' };
      expect(await store.tryAcquire(k, 30_000, 'token-a', claim)).toBe(AcquireResult.ACQUIRED);
      expect(await redis.get(k)).toBe('token-a Zm9vYmFyYmF6cXV4 message-1');
      expect(await store.tryAcquire(k, 30_000, 'token-b', { fingerprint: 'other' })).toEqual({
        result: AcquireResult.IN_PROGRESS,
        ...claim,
      });
      expect(await store.markComplete(k, 60_000, 'token-a')).toBe(true);
      expect(await store.tryAcquire(k, 30_000, 'token-c', { fingerprint: 'other' })).toEqual({
        result: AcquireResult.COMPLETED,
        ...claim,
      });
    } finally {
      await redis.quit();
    }
  });

  it('does not mistake other errors for an old server: a key of another type fails the claim', async () => {
    const server = await startRedisServer(); // private: its command statistics are this test's own
    const redis = new Redis(server.url);
    try {
      await redis.hset('k', 'field', 'value');
      const store = new RedisIdempotencyStore(redis);
      await expect(store.tryAcquire('k', 30_000, 'token-a')).rejects.toThrow(
        new RegExp(
          `^RedisIdempotencyStore: Redis at 127\\.0\\.0\\.1:${server.port} answered with an error: WRONGTYPE`,
        ),
      );
      await redis.del('k');
      expect(await store.tryAcquire('k', 30_000, 'token-a')).toBe(AcquireResult.ACQUIRED);
      // Both claims were the plain command; no script ran.
      const stats = await redis.info('commandstats');
      expect(stats).toMatch(/^cmdstat_set:calls=2,.*failed_calls=1/m);
      expect(stats).not.toMatch(/^cmdstat_eval/m);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});

withRedis.describe('RedisIdempotencyStore connections', () => {
  it('creates (on its first command) and on shutdown closes a connection from a URL', async () => {
    const store = new RedisIdempotencyStore(REDIS_URL);
    expect(store.client).toBeUndefined(); // no client, no socket until the first command
    expect(await store.tryAcquire(`owned:${randomUUID()}`, 1_000, 't')).toBe(AcquireResult.ACQUIRED);
    const client = store.client as Redis;
    expect(client.status).toBe('ready');
    expect(client.options.maxRetriesPerRequest).toBe(1);
    await store.onApplicationShutdown();
    expect(client.status).toBe('end');
  });

  it('lets the caller’s ioredis options override the recommended ones', async () => {
    const { port } = new URL(REDIS_URL);
    const store = new RedisIdempotencyStore({ port: Number(port), maxRetriesPerRequest: 3 });
    await store.forget(`owned:${randomUUID()}`, 't');
    const client = store.client as Redis;
    expect(client.options.maxRetriesPerRequest).toBe(3);
    expect(client.options.commandTimeout).toBe(2_000);
    await store.close();
    expect(client.status).toBe('end');
  });

  it('closing before the first command opens nothing', async () => {
    const store = new RedisIdempotencyStore(REDIS_URL);
    await store.close();
    expect(store.client).toBeUndefined();
  });

  it('closed with its application, refuses another, saying so and how to build one per app', async () => {
    // As a store built in a module decorator meets the next test's app (it used to answer
    // "Redis at ... is unreachable (Connection is closed)").
    const store = new RedisIdempotencyStore(REDIS_URL);
    expect(await store.tryAcquire(`owned:${randomUUID()}`, 1_000, 't')).toBe(AcquireResult.ACQUIRED);
    const client = store.client as Redis;
    await store.onApplicationShutdown();
    expect(client.status).toBe('end');
    const closed = expect.objectContaining({
      code: 'IDEMPOTENCY_STORE_CLOSED',
      message: expect.stringMatching(
        /^RedisIdempotencyStore \(redis:\/\/127\.0\.0\.1:\d+\) is closed: the application that started it shut down .*Build one per application: IdempotencyModule\.forRootAsync\(\{ useFactory: \(\) => \(\{ store: new RedisIdempotencyStore\(\.\.\.\), service \}\) \}\)/,
      ),
    });
    await expect(store.onModuleInit()).rejects.toEqual(closed);
    await expect(store.tryAcquire(`owned:${randomUUID()}`, 1_000, 't')).rejects.toEqual(closed);
    await expect(store.markCompleteMany([{ key: 'k', ttlMs: 1_000, token: 't' }])).rejects.toEqual(closed);
    expect(store.client).toBeUndefined(); // no new connection left open behind the app
  });

  it.each([undefined, null, ''])(
    'given nothing to connect to (%p: an unset REDIS_URL), refuses to start instead of using localhost',
    async (connection) => {
      // Built without a throw (a store the tests override is never started), and without a connection.
      const store = new RedisIdempotencyStore(connection as unknown as string);
      const refusal =
        /^RedisIdempotencyStore: nothing to connect to: it was given (undefined|null|an empty string) \(an unset environment variable, such as REDIS_URL\?\)\. Give a redis:\/\/ URL/;
      await expect(store.onModuleInit()).rejects.toThrow(refusal);
      await expect(store.tryAcquire('k', 1_000, 't')).rejects.toThrow(refusal);
      expect(store.client).toBeUndefined();
      await store.close(); // nothing to close, and no handle left
    },
  );

  it('leaves a client it was given open', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const store = new RedisIdempotencyStore(redis);
      await store.tryAcquire(`given:${randomUUID()}`, 1_000, 't');
      await store.onApplicationShutdown();
      expect(redis.status).toBe('ready');
    } finally {
      await redis.quit();
    }
  });
});

withRedis.describe('RedisIdempotencyStore start-up check (failFastOnStartup)', () => {
  it('is off by default: onModuleInit sends nothing, even to a Redis that is not there', async () => {
    // (The server-settings check, on by default, runs in the background; it has its own spec.)
    const store = new RedisIdempotencyStore('redis://127.0.0.1:1', { serverCheck: 'off' });
    await store.onModuleInit();
    expect(store.client).toBeUndefined();
  });

  it('pings a Redis that is up, through the client it was given', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const ping = jest.spyOn(redis, 'ping');
      await new RedisIdempotencyStore(redis, { failFastOnStartup: true }).onModuleInit();
      expect(ping).toHaveBeenCalledTimes(1);
    } finally {
      await redis.quit();
    }
  });

  it('names a cluster by its startup nodes', async () => {
    const cluster = {
      startupNodes: [{ host: 'redis-1', port: 7000 }, { host: 'redis-2' }],
      status: 'ready',
      set: async () => null,
      evalsha: async () => 0,
      eval: async () => 0,
      ping: async () => Promise.reject(new Error('CLUSTERDOWN The cluster is down')),
      quit: async () => 'OK',
      disconnect: () => undefined,
      once: () => undefined,
    };
    await expect(
      new RedisIdempotencyStore(cluster, { failFastOnStartup: true }).onModuleInit(),
    ).rejects.toThrow(
      'could not reach Redis at the cluster redis-1:7000, redis-2:6379 at start-up (CLUSTERDOWN The cluster is down)',
    );
  });

  it("names the socket's error for a Redis that is not there, PING or the server check (serverCheck: 'fail')", async () => {
    const port = await freePort();
    for (const [options, what, fix] of [
      [{ failFastOnStartup: true, serverCheck: 'off' }, '', 'drop failFastOnStartup'],
      [{ serverCheck: 'fail' }, " to check its settings (serverCheck: 'fail')", "set serverCheck: 'warn'"],
    ] as const) {
      const store = new RedisIdempotencyStore(`redis://127.0.0.1:${port}`, options);
      await expect(store.onModuleInit()).rejects.toThrow(
        `could not reach Redis at redis://127.0.0.1:${port}${what} at start-up (connect ECONNREFUSED 127.0.0.1:${port}). ` +
          `Start it or fix the address; or ${fix} to let the app start without it`,
      );
      await store.close();
    }
  });

  it('leaves no timer behind once a start-up that could not reach Redis is refused and closed', async () => {
    // ioredis waits 2 s (its disconnectTimeout) for a socket that had already closed: a service whose
    // store refused to start stayed alive that long, and a Jest worker past its exit.
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const port = await freePort();
    const store = new RedisIdempotencyStore(`redis://127.0.0.1:${port}`, { failFastOnStartup: true });
    await expect(store.onModuleInit()).rejects.toThrow('could not reach Redis');
    await store.close();
    await waitFor(() => timers() <= before, 1_000, 'the disconnect to leave no timer');
  });

  it('refuses a startupTimeoutMs that is not a positive number', () => {
    expect(() => new RedisIdempotencyStore(REDIS_URL, { startupTimeoutMs: 0 })).toThrow(
      'startupTimeoutMs must be a positive number of milliseconds, got 0',
    );
  });
});
