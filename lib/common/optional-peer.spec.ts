import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { IdempotencyError } from './sqs-idempotency.error';
import { SqsIdempotencyError } from './sqs-idempotency.error';
import { MissingPeerDependencyError, OPTIONAL_PEERS, optionalPeer } from './optional-peer';

// Resolves from a folder with no node_modules above it: the real "not installed" error of Node.
const requireFromNowhere = createRequire('/nonexistent-app/index.js');

describe('optionalPeer', () => {
  it('imports nothing until first called, then shares one load', async () => {
    const load = jest.fn(async () => import('ioredis'));
    const loadRedis = optionalPeer('ioredis', 'RedisIdempotencyStore', load);
    expect(load).not.toHaveBeenCalled();

    const [first, second] = await Promise.all([loadRedis(), loadRedis()]);
    expect(await loadRedis()).toBe(first);
    expect(second).toBe(first);
    expect(typeof first.Redis).toBe('function'); // named exports, as both builds see them
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('turns a missing peer into an error naming the feature, the package and the install command', async () => {
    const loadConsumer = optionalPeer('sqs-consumer', 'SqsModule polling', async () =>
      requireFromNowhere('sqs-consumer'),
    );
    const error = await loadConsumer().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MissingPeerDependencyError);
    // The library's root error; not an idempotency error (a missing package is no idempotency failure).
    expect(error).toBeInstanceOf(SqsIdempotencyError);
    expect(error).not.toBeInstanceOf(IdempotencyError);
    expect((error as Error).message).toBe(
      'SqsModule polling needs the package "sqs-consumer" (^14.0.0 || ^15.0.0), an optional peer dependency ' +
        'of nestjs-idempotent-sqs that this app does not have. Install it: npm install sqs-consumer',
    );
    expect((error as MissingPeerDependencyError).loadError).toMatchObject({ code: 'MODULE_NOT_FOUND' });
  });

  it('tries again after a failure (the package may be installed since)', async () => {
    let installed = false;
    const loadApi = optionalPeer('@opentelemetry/api', 'metrics', async () =>
      installed ? import('@opentelemetry/api') : requireFromNowhere('@opentelemetry/api'),
    );
    await expect(loadApi()).rejects.toBeInstanceOf(MissingPeerDependencyError);
    installed = true;
    await expect(loadApi()).resolves.toHaveProperty('metrics');
  });

  it("keeps the original error when a peer's own dependency is missing, or loading fails otherwise", async () => {
    const notFound = await Promise.resolve()
      .then(() => requireFromNowhere('@aws-sdk/client-sqs'))
      .catch((e: unknown) => e);
    const loadConsumer = optionalPeer('sqs-consumer', 'SqsModule polling', async () => {
      throw notFound; // what requiring an installed sqs-consumer without its SDK would throw
    });
    await expect(loadConsumer()).rejects.toBe(notFound);

    const broken = new SyntaxError('Unexpected token');
    await expect(optionalPeer('ioredis', 'x', () => Promise.reject(broken))()).rejects.toBe(broken);
  });

  it('lists the same optional peers and ranges as package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    const optional = Object.keys(pkg.peerDependenciesMeta).filter(
      (name) => pkg.peerDependenciesMeta[name].optional,
    );
    expect(optional.sort()).toEqual(Object.keys(OPTIONAL_PEERS).sort());
    for (const [name, range] of Object.entries(OPTIONAL_PEERS))
      expect(pkg.peerDependencies[name]).toBe(range);
  });
});
