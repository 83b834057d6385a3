import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { requires } from '../../../test/support/prerequisites';
import { captureLogs } from '../../../test/support/captured-logs';
import { startRedisServer } from '../../../test/support/redis-server';
import { resolveModuleOptions } from '../../idempotency/idempotency-options.validation';
import { AcquireResult } from '../idempotency-store.interface';
import { RedisIdempotencyStore } from './redis-idempotency.store';
import type { RedisScriptClient } from './redis-connection';

// What the store answers for each reply Redis (or a client standing in front of it) can give: the
// read-only key lookup, scripts that fail, replies of the wrong shape, and the split of large
// batches. Every command reaches a real redis-server unless a test says what it replaces.

const withRedis = requires('redis-server');

// The private redis-server the Jest global setup started.
const REDIS_URL = process.env.REDIS_URL!;

/**
 * A client whose script calls go through `evalsha` and `eval` as given (defaulting to the real
 * server's), the rest to the real server: a proxy or a custom client answering in its own way.
 */
function clientOver(
  redis: Redis,
  replace: {
    evalsha?: RedisScriptClient['evalsha'];
    eval?: RedisScriptClient['eval'];
    set?: () => Promise<never>;
  } = {},
) {
  const calls = { evalsha: 0, eval: 0 };
  const client: RedisScriptClient = {
    set: (replace.set ??
      ((...args: unknown[]) => redis.set(...(args as [string, string, 'NX', 'GET'])))) as never,
    evalsha: (...args) => {
      calls.evalsha++;
      return (replace.evalsha ?? ((...rest) => redis.evalsha(...(rest as [string, number]))))(...args);
    },
    eval: (...args) => {
      calls.eval++;
      return (replace.eval ?? ((...rest) => redis.eval(...(rest as [string, number]))))(...args);
    },
    get status() {
      return redis.status;
    },
    quit: () => redis.quit(),
    disconnect: () => redis.disconnect(),
    once: (event, listener) => redis.once(event, listener),
  };
  return { client, calls };
}

withRedis.describe('RedisIdempotencyStore key lookup (inspect)', () => {
  let redis: Redis;
  let store: RedisIdempotencyStore;
  const key = () => `redis-inspect:${randomUUID()}`;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    store = new RedisIdempotencyStore(redis);
  });
  afterEach(async () => {
    await redis.quit();
  });

  it('tells an in-progress key with its lease left, and one whose lease never ends', async () => {
    const leased = key();
    await store.tryAcquire(leased, 30_000, 'token-a');
    const answer = await store.inspect(leased);
    expect(answer).toEqual({ state: 'IN_PROGRESS', leaseLeftMs: expect.any(Number) });
    expect((answer as { leaseLeftMs: number }).leaseLeftMs).toBeGreaterThan(29_000);
    expect((answer as { leaseLeftMs: number }).leaseLeftMs).toBeLessThanOrEqual(30_000);
    const endless = key();
    await store.tryAcquire(endless, Infinity, 'token-a');
    expect(await store.inspect(endless)).toStrictEqual({ state: 'IN_PROGRESS' });
  });

  it('tells a completed key with the time it is still remembered, and one remembered forever', async () => {
    const remembered = key();
    await store.tryAcquire(remembered, 30_000, 'token-a');
    await store.markComplete(remembered, 60_000, 'token-a');
    const answer = await store.inspect(remembered);
    expect(answer).toEqual({ state: 'COMPLETED', expiresInMs: expect.any(Number) });
    expect((answer as { expiresInMs: number }).expiresInMs).toBeGreaterThan(59_000);
    const forever = key();
    await store.tryAcquire(forever, 30_000, 'token-a');
    await store.markComplete(forever, Infinity, 'token-a');
    expect(await store.inspect(forever)).toStrictEqual({ state: 'COMPLETED' });
  });

  it('tells a completed key that keeps its payload fingerprint from one in progress', async () => {
    const k = key();
    await store.tryAcquire(k, 30_000, 'token-a', { fingerprint: 'fp', messageId: 'm-1' });
    expect(await store.inspect(k)).toMatchObject({ state: 'IN_PROGRESS' });
    await store.markComplete(k, 60_000, 'token-a');
    expect(await redis.get(k)).toBe('1 fp m-1');
    const answer = await store.inspect(k);
    expect(answer).toEqual({ state: 'COMPLETED', expiresInMs: expect.any(Number) });
    expect((answer as { expiresInMs: number }).expiresInMs).toBeGreaterThan(59_000);
  });

  it('answers UNKNOWN for a key Redis does not hold, and changes nothing it reads', async () => {
    expect(await store.inspect(key())).toStrictEqual({ state: 'UNKNOWN' });
    const held = key();
    await store.tryAcquire(held, 30_000, 'token-a');
    await store.inspect(held);
    expect(await redis.get(held)).toBe('token-a');
    expect(await store.tryAcquire(held, 30_000, 'token-b')).toBe(AcquireResult.IN_PROGRESS);
  });
});

withRedis.describe('RedisIdempotencyStore fingerprinted claims on keys claimed without one', () => {
  let redis: Redis;
  let store: RedisIdempotencyStore;
  const key = () => `redis-fingerprint:${randomUUID()}`;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    store = new RedisIdempotencyStore(redis);
  });
  afterEach(async () => {
    await redis.quit();
  });

  it('answers the held state with no fingerprint, in progress or completed', async () => {
    const k = key();
    await store.tryAcquire(k, 30_000, 'token-a');
    expect(await store.tryAcquire(k, 30_000, 'token-b', { fingerprint: 'fp' })).toBe(
      AcquireResult.IN_PROGRESS,
    );
    await store.markComplete(k, 60_000, 'token-a');
    expect(await store.tryAcquire(k, 30_000, 'token-c', { fingerprint: 'fp' })).toBe(AcquireResult.COMPLETED);
  });

  it('refuses a fingerprint claim it could misread, naming itself, before any round trip', async () => {
    const k = key();
    await expect(store.tryAcquire(k, 30_000, 't', { fingerprint: 'f p' })).rejects.toThrow(
      'RedisIdempotencyStore: a fingerprint must be a non-empty string without spaces, got "f p".',
    );
    await expect(
      store.tryAcquire(k, 30_000, 't', { fingerprint: 'fp', messageId: 7 as never }),
    ).rejects.toThrow('RedisIdempotencyStore: a message id must be a string, got 7.');
    expect(await redis.exists(k)).toBe(0);
  });

  it('keeps a fingerprint without a message id as "<token> <fingerprint>", and answers it alone', async () => {
    const k = key();
    expect(await store.tryAcquire(k, 30_000, 'token-a', { fingerprint: 'fp-1' })).toBe(
      AcquireResult.ACQUIRED,
    );
    expect(await redis.get(k)).toBe('token-a fp-1');
    expect(await store.tryAcquire(k, 30_000, 'token-b', { fingerprint: 'fp-2' })).toStrictEqual({
      result: AcquireResult.IN_PROGRESS,
      fingerprint: 'fp-1',
    });
  });
});

withRedis.describe('RedisIdempotencyStore when a script fails', () => {
  it('fails every call whose script errs, on its first run (EVAL) and once cached (EVALSHA), without retrying it in full', async () => {
    // A fresh server knows no script: each first call meets NOSCRIPT and sends the script in full.
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    try {
      await redis.hset('h', 'field', 'value'); // every script reads the key as a string: WRONGTYPE
      const store = new RedisIdempotencyStore(redis);
      const wrongType = /^RedisIdempotencyStore: Redis at 127\.0\.0\.1:\d+ answered with an error: WRONGTYPE/;
      const calls = () => [
        store.markComplete('h', 30_000, 't'),
        store.forget('h', 't'),
        store.extend('h', 30_000, 't'),
        store.inspect('h'),
        store.tryAcquireMany([{ key: 'h', ttlMs: 30_000, token: 't' }]),
        store.markCompleteMany([{ key: 'h', ttlMs: 30_000, token: 't' }]),
      ];
      for (const call of calls()) await expect(call).rejects.toThrow(wrongType);
      const evalsAfterFirstRound = (await redis.info('commandstats')).match(
        /^cmdstat_eval:calls=(\d+),/m,
      )?.[1];
      expect(evalsAfterFirstRound).toBe('6');
      // The scripts are cached now: the same failure comes from EVALSHA, and is not retried as EVAL.
      for (const call of calls()) await expect(call).rejects.toThrow(wrongType);
      expect((await redis.info('commandstats')).match(/^cmdstat_eval:calls=(\d+),/m)?.[1]).toBe('6');
      expect(await redis.hget('h', 'field')).toBe('value');
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });

  it('takes a rejection that is not an Error for a failure, not for NOSCRIPT or an old server', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      // A custom client rejecting with plain strings that read like the replies the store handles.
      const { client, calls } = clientOver(redis, {
        evalsha: () => Promise.reject('NOSCRIPT No matching script'),
        set: () => Promise.reject('ERR syntax error'),
      });
      const store = new RedisIdempotencyStore(client);
      const failure = /^RedisIdempotencyStore: Redis at .* answered with an error: /;
      await expect(store.markComplete('k', 30_000, 't')).rejects.toThrow(failure);
      await expect(store.tryAcquireMany([{ key: 'k', ttlMs: 30_000, token: 't' }])).rejects.toThrow(failure);
      expect(calls.eval).toBe(0);
      await expect(store.tryAcquire('k', 30_000, 't')).rejects.toThrow(
        /answered with an error: ERR syntax error/,
      );
      // Not taken for a server before 7.0: no claim went through the script.
      expect(calls.evalsha).toBe(2);
    } finally {
      await redis.quit();
    }
  });
});

withRedis.describe('RedisIdempotencyStore telling an old server from other errors', () => {
  it('takes only an error that starts "ERR syntax error" for a server before Redis 7.0', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      // A proxy in front of Redis quoting a syntax error of its own: not an old server's refusal of NX GET.
      const { client, calls } = clientOver(redis, {
        set: () => Promise.reject(new Error('PROXYERR upstream: ERR syntax error')),
      });
      const store = new RedisIdempotencyStore(client);
      await expect(store.tryAcquire(`redis-old:${randomUUID()}`, 30_000, 't')).rejects.toThrow(
        /answered with an error: PROXYERR upstream: ERR syntax error$/,
      );
      expect(calls.evalsha + calls.eval).toBe(0);
      // The real refusal, in any case, switches to the claim script.
      const { client: old, calls: oldCalls } = clientOver(redis, {
        set: () => Promise.reject(new Error('err Syntax Error')),
      });
      expect(await new RedisIdempotencyStore(old).tryAcquire(`redis-old:${randomUUID()}`, 30_000, 't')).toBe(
        AcquireResult.ACQUIRED,
      );
      expect(oldCalls.evalsha).toBe(1);
    } finally {
      await redis.quit();
    }
  });
});

withRedis.describe('RedisIdempotencyStore batch replies', () => {
  let redis: Redis;
  beforeEach(() => {
    redis = new Redis(REDIS_URL);
  });
  afterEach(async () => {
    await redis.quit();
  });

  it('answers each of the three claim results from one batch', async () => {
    const store = new RedisIdempotencyStore(redis);
    const prefix = `redis-batch-three:${randomUUID()}`;
    await store.tryAcquire(`${prefix}:held`, 30_000, 'other');
    await redis.set(`${prefix}:done`, '1', 'PX', 30_000);
    const answers = await store.tryAcquireMany(
      ['new', 'done', 'held'].map((name) => ({ key: `${prefix}:${name}`, ttlMs: 30_000, token: 't' })),
    );
    expect(answers).toEqual([AcquireResult.ACQUIRED, AcquireResult.COMPLETED, AcquireResult.IN_PROGRESS]);
    expect(
      await store.markCompleteMany(
        ['new', 'held'].map((name) => ({ key: `${prefix}:${name}`, ttlMs: 30_000, token: 't' })),
      ),
    ).toEqual([true, false]);
  });

  it.each<[string, unknown]>([
    ['an answer past the largest', [3]],
    ['a negative answer', [-1]],
    ['a fraction', [0.5]],
    ['a string', ['0']],
    ['too many answers', [0, 0]],
    ['no list', 'OK'],
    ['nothing', null],
  ])('refuses a claim reply holding %s, as a store failure', async (_, reply) => {
    const { client } = clientOver(redis, { evalsha: () => Promise.resolve(reply) });
    const store = new RedisIdempotencyStore(client);
    await expect(store.tryAcquireMany([{ key: 'k', ttlMs: 30_000, token: 't' }])).rejects.toThrow(
      `RedisIdempotencyStore: Redis at`,
    );
    await expect(store.tryAcquireMany([{ key: 'k', ttlMs: 30_000, token: 't' }])).rejects.toThrow(
      `tryAcquireMany: unexpected reply ${JSON.stringify(reply)} for 1 keys`,
    );
  });

  it('takes 0 and 1 from a completion reply, and refuses 2', async () => {
    const completions = [
      { key: 'a', ttlMs: 30_000, token: 't' },
      { key: 'b', ttlMs: 30_000, token: 't' },
    ];
    const fine = new RedisIdempotencyStore(
      clientOver(redis, { evalsha: () => Promise.resolve([1, 0]) }).client,
    );
    expect(await fine.markCompleteMany(completions)).toEqual([true, false]);
    const odd = new RedisIdempotencyStore(
      clientOver(redis, { evalsha: () => Promise.resolve([1, 2]) }).client,
    );
    await expect(odd.markCompleteMany(completions)).rejects.toThrow(
      'markCompleteMany: unexpected reply [1,2] for 2 keys',
    );
  });

  it.each([
    [1, 1],
    [500, 1],
    [501, 2],
    [1_000, 2],
    [1_001, 3],
  ])(
    'sends %i claims in %i script calls of at most 500 keys, answered in order',
    async (size, scriptCalls) => {
      const { client, calls } = clientOver(redis);
      const store = new RedisIdempotencyStore(client);
      const prefix = `redis-batch-split:${randomUUID()}`;
      const claims = Array.from({ length: size }, (_, i) => ({
        key: `${prefix}:${i}`,
        ttlMs: 30_000,
        token: `t${i}`,
      }));
      // The last key of each possible chunk is held already: answers must line up with their keys.
      for (const i of [size - 1, 499, 500, 999].filter((index) => index < size)) {
        await redis.set(claims[i].key, '1', 'PX', 30_000);
      }
      const answers = await store.tryAcquireMany(claims);
      // Each script call starts with EVALSHA (an EVAL follows only a NOSCRIPT).
      expect(calls.evalsha).toBe(scriptCalls);
      const completed = new Set([size - 1, 499, 500, 999]);
      expect(answers).toEqual(
        claims.map((_, i) => (completed.has(i) ? AcquireResult.COMPLETED : AcquireResult.ACQUIRED)),
      );
      expect(await redis.get(claims[0].key)).toBe(size === 1 ? '1' : 't0');
    },
  );
});

withRedis.describe('RedisIdempotencyStore as a shared store', () => {
  it('is shared: an app on it needs a service identity', () => {
    const store = new RedisIdempotencyStore(REDIS_URL);
    expect(store.shared).toBe(true);
    expect(() => resolveModuleOptions({}, store, {})).toThrow(
      /the store RedisIdempotencyStore is shared with other processes/,
    );
  });

  it('opens no connection for an empty batch', async () => {
    const store = new RedisIdempotencyStore(REDIS_URL);
    expect(await store.tryAcquireMany([])).toEqual([]);
    expect(await store.markCompleteMany([])).toEqual([]);
    expect(store.client).toBeUndefined();
    await store.close();
  });

  it('tells a lease or a completion about to end (0 ms left) from one without expiry', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const replying = (reply: unknown) =>
        new RedisIdempotencyStore(clientOver(redis, { evalsha: () => Promise.resolve(reply) }).client);
      expect(await replying([1, 0]).inspect('k')).toStrictEqual({ state: 'COMPLETED', expiresInMs: 0 });
      expect(await replying([0, 0]).inspect('k')).toStrictEqual({ state: 'IN_PROGRESS', leaseLeftMs: 0 });
      expect(await replying([1, -1]).inspect('k')).toStrictEqual({ state: 'COMPLETED' });
      expect(await replying([0, -1]).inspect('k')).toStrictEqual({ state: 'IN_PROGRESS' });
    } finally {
      await redis.quit();
    }
  });
});

withRedis.describe('RedisIdempotencyStore on a cluster client', () => {
  it('sends one script call per hash slot, each with its keys in the batch order, and answers in the batch order', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const sent: unknown[][] = [];
      // A single server answering as a cluster node would: every slot's call reaches it.
      const { client } = clientOver(redis, {
        evalsha: (...args) => {
          sent.push(args);
          return redis.evalsha(...(args as [string, number]));
        },
      });
      const store = new RedisIdempotencyStore(Object.assign(client, { isCluster: true }));
      const prefix = randomUUID();
      const keys = [
        `{a-${prefix}}:1`,
        `{b-${prefix}}:1`,
        `{a-${prefix}}:2`,
        `{b-${prefix}}:2`,
        `{a-${prefix}}:3`,
      ];
      await redis.set(keys[2], '1', 'PX', 30_000);
      await redis.set(keys[3], 'other', 'PX', 30_000);
      const answers = await store.tryAcquireMany(
        keys.map((key, i) => ({ key, ttlMs: 30_000, token: `t${i}` })),
      );
      expect(answers).toEqual([
        AcquireResult.ACQUIRED,
        AcquireResult.ACQUIRED,
        AcquireResult.COMPLETED,
        AcquireResult.IN_PROGRESS,
        AcquireResult.ACQUIRED,
      ]);
      const calls = sent.map((args) => args.slice(1));
      expect(calls).toHaveLength(2);
      expect(calls).toContainEqual([3, keys[0], keys[2], keys[4], 't0', 30_000, 't2', 30_000, 't4', 30_000]);
      expect(calls).toContainEqual([2, keys[1], keys[3], 't1', 30_000, 't3', 30_000]);
      expect(await redis.get(keys[4])).toBe('t4');
    } finally {
      await redis.quit();
    }
  });
});

withRedis.describe('RedisIdempotencyStore after Redis did not answer in time', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs that Redis answers again after the next claim, completion or batch that succeeds', async () => {
    const server = await startRedisServer();
    const store = new RedisIdempotencyStore(
      { host: '127.0.0.1', port: server.port, commandTimeout: 200 },
      { serverCheck: 'off' },
    );
    const lines = captureLogs();
    const recovered = () => lines.filter((line) => line.includes('answers again')).length;
    /** One call times out on the stopped server; the recovery line comes only with the next success. */
    const hangThenRecover = async (success: () => Promise<unknown>) => {
      process.kill(server.pid, 'SIGSTOP');
      try {
        await expect(store.tryAcquire(randomUUID(), 30_000, 't')).rejects.toThrow(
          /did not answer within 200 ms/,
        );
      } finally {
        process.kill(server.pid, 'SIGCONT');
      }
      const before = recovered();
      await success();
      expect(recovered()).toBe(before + 1);
    };
    try {
      expect(await store.tryAcquire('warm', 30_000, 't')).toBe(AcquireResult.ACQUIRED); // connected
      await hangThenRecover(() => store.tryAcquire('claim', 30_000, 't'));
      await hangThenRecover(() => store.markComplete('warm', 30_000, 't'));
      await hangThenRecover(() => store.markCompleteMany([{ key: 'claim', ttlMs: 30_000, token: 't' }]));
      expect(lines.filter((line) => line.includes('is unreachable (no answer within 200 ms)'))).toHaveLength(
        3,
      );
      expect(recovered()).toBe(3);
    } finally {
      await store.close();
      await server.stop();
    }
  });
});
