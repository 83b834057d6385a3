import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { dirname, join } from 'node:path';
import { Idempotent, IdempotencyModule, IdempotencyStore, SqsMessageHandler } from '../lib';
import { DynamoDbIdempotencyStore } from '../lib/stores/dynamodb';
import { createIdempotencyTable, PostgresIdempotencyStore } from '../lib/stores/postgres';
import { RedisIdempotencyStore } from '../lib/stores/redis';
import { IdempotencyStoreClosedError } from '../lib/stores';
import { OrderCreated } from './fixtures/orders.fixture';
import { DynaliteServer, startDynalite } from './support/dynalite';
import { ensureBuilt } from './support/ensure-built';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { readmeBlocks } from './support/readme-blocks';

/**
 * docs/testing.md's recipe for an app on a shared store, run as printed: the README's Quick start module
 * with its `IdempotencyModule.forRoot(...)` line replaced by the recipe's `idempotency` (a store built per
 * app by `forRootAsync`'s factory, keys under `IDEMPOTENCY_KEY_PREFIX`), the README's own test unchanged,
 * and the recipe's Jest setup file giving each run a prefix of its own. The README's test then passes twice
 * in a row on one Redis, one DynamoDB table (dynalite) and one Postgres table: each run keeps the keys it
 * completed, and the next run never meets them. Without the prefix the second run reads DUPLICATE where it
 * expects OK; with the store built in the module's decorator, the second test's app meets a closed store.
 *
 * The recipe's unit test swaps the store for the in-memory one: it passes with no Redis to reach, and
 * its factory's Redis store opens no connection.
 */
ensureBuilt(); // the blocks import the package as users do, from dist/

const ROOT = join(__dirname, '..');
const dir = join(ROOT, '.readme-check', String(process.pid), 'shared-store');

const readme = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
const testingPage = readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8');
const testing = readmeBlocks(testingPage);
const block = (blocks: typeof readme, page: string, path: string) => {
  const found = blocks.find(
    (candidate) => candidate.path === path || candidate.code.startsWith(`// ${path}`),
  );
  if (!found) throw new Error(`${page} has no block for ${path}: the recipe this spec runs is gone`);
  return found.code;
};
const QUICK_START_MODULE = block(readme, 'README.md', 'src/app.module.ts');
const README_TEST = block(readme, 'README.md', 'src/orders.spec.ts');
const IDEMPOTENCY = block(testing, 'docs/testing.md', 'src/idempotency.ts');
const UNIT_TEST = block(testing, 'docs/testing.md', 'src/orders.unit.spec.ts');
const KEY_PREFIX_SETUP = block(testing, 'docs/testing.md', 'test/idempotency-key-prefix.js');

/** The Quick start's module, importing the recipe's `idempotency` in place of its `IdempotencyModule.forRoot(...)`. */
function sharedStoreModule(): string {
  const line = /^(\s*)IdempotencyModule\.forRoot\(.*\),.*$/m;
  if (!line.test(QUICK_START_MODULE)) {
    throw new Error("README.md's src/app.module.ts has no `IdempotencyModule.forRoot(...),` line to replace");
  }
  return `import { idempotency } from './idempotency';\n${QUICK_START_MODULE.replace(line, '$1idempotency,')}`;
}

/** The recipe's `idempotency`, on `store` as docs/testing.md words its factory for that store. */
function idempotencyOn(store: 'redis' | 'dynamodb' | 'postgres'): string {
  if (store === 'redis') return IDEMPOTENCY;
  const name = store === 'dynamodb' ? 'DynamoDbIdempotencyStore' : 'PostgresIdempotencyStore';
  const expression = new RegExp('`(new ' + name + '\\(.*?\\))`').exec(testingPage)?.[1];
  if (!expression) throw new Error(`docs/testing.md no longer says how the factory builds a ${name}`);
  const redis = /new RedisIdempotencyStore\(process\.env\.REDIS_URL!\)/;
  const redisImport = /import \{ RedisIdempotencyStore \} from 'nestjs-idempotent-sqs\/redis';/;
  if (!redis.test(IDEMPOTENCY) || !redisImport.test(IDEMPOTENCY)) {
    throw new Error(
      "docs/testing.md's src/idempotency.ts no longer builds new RedisIdempotencyStore(process.env.REDIS_URL!)",
    );
  }
  return IDEMPOTENCY.replace(redis, expression).replace(
    redisImport,
    `import { ${name} } from 'nestjs-idempotent-sqs/${store}';`,
  );
}

/** Writes one run's app (`<name>/src/...`, `<name>/test/...`); answers the paths of its spec and setup file. */
function writeRun(name: string, files: Record<string, string>): Record<string, string> {
  const paths: Record<string, string> = {};
  for (const [path, code] of Object.entries(files)) {
    const file = join(dir, name, path);
    mkdirSync(dirname(file), { recursive: true });
    // `export {}` makes each TypeScript block a module of its own; the setup file stays a plain script.
    writeFileSync(file, path.endsWith('.ts') ? `${code}\nexport {};\n` : `${code}\n`);
    paths[path] = file;
  }
  return paths;
}

rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'node_modules'), { recursive: true });
// The package as users import it: its package.json `exports` lead to dist/.
symlinkSync(ROOT, join(dir, 'node_modules', 'nestjs-idempotent-sqs'), 'dir');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The README's test, run twice in a row as the recipe sets it up, on the store `connect()` prepares. */
function describeTwoRuns(
  store: 'redis' | 'dynamodb' | 'postgres',
  connect: () => Promise<{ env: Record<string, string>; close(): Promise<void> }>,
): void {
  const saved: Record<string, string | undefined> = {};
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const started = await connect();
    close = started.close;
    for (const [name, value] of Object.entries(started.env)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  }, 60_000);
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    delete process.env.IDEMPOTENCY_KEY_PREFIX;
    await close?.();
  });

  const prefixes: string[] = [];
  for (const run of [1, 2]) {
    describe(`run ${run}`, () => {
      const files = writeRun(`${store}-${run}`, {
        'src/app.module.ts': sharedStoreModule(),
        'src/idempotency.ts': idempotencyOn(store),
        'src/orders.spec.ts': README_TEST,
        'test/idempotency-key-prefix.js': KEY_PREFIX_SETUP,
      });
      // What Jest's setupFiles does before each test file: the run gets keys of its own.
      beforeAll(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require(files['test/idempotency-key-prefix.js']);
        prefixes.push(process.env.IDEMPOTENCY_KEY_PREFIX!);
      });
      // The README's describe('orders') registers here, as written, with modules of its own, as Jest gives
      // each test file (one registry for all six runs would show each app the other runs' handler classes).
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require(files['src/orders.spec.ts']);
      });
    });
  }
  it('gave each run a prefix of its own', () => {
    expect(prefixes).toHaveLength(2);
    expect(prefixes[0]).toMatch(/^test-[0-9a-f-]{36}$/);
    expect(prefixes[1]).not.toBe(prefixes[0]);
  });
}

/** An app whose module builds its store once, in the decorator, as the store guides used to. */
function decoratorBuiltModule(store: IdempotencyStore) {
  @Injectable()
  class Handler {
    @SqsMessageHandler(OrderCreated)
    @Idempotent()
    async on(): Promise<void> {}
  }
  @Module({ imports: [IdempotencyModule.forRoot({ store, service: 'orders' })], providers: [Handler] })
  class AppModule {}
  return AppModule;
}

/** The second app made from a module that built its store once meets it closed, and is told so. */
async function expectSecondAppRefused(store: IdempotencyStore, name: string): Promise<void> {
  const AppModule = decoratorBuiltModule(store);
  const first = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await first.init();
  await first.close();
  const second = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const refused = await second.init().then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refused).toBeInstanceOf(IdempotencyStoreClosedError);
  expect((refused as Error).message).toContain(`${name} (`);
  expect((refused as Error).message).toContain(
    `Build one per application: IdempotencyModule.forRootAsync({ useFactory: () => ({ store: new ${name}(...), service }) })`,
  );
}

const redis = requires('redis-server');
const postgres = requires('postgres');

describe("docs/testing.md: an app on a shared store, the README's test run twice in a row", () => {
  redis.describe('on Redis', () => {
    describeTwoRuns('redis', async () => ({
      env: { REDIS_URL: process.env.REDIS_URL! },
      close: async () => undefined,
    }));

    it('a store built in the decorator fails the second app, saying it is closed and how to build one per app', () =>
      expectSecondAppRefused(new RedisIdempotencyStore(process.env.REDIS_URL!), 'RedisIdempotencyStore'));
  });

  describe('on DynamoDB (dynalite)', () => {
    let dynamo: DynaliteServer;
    describeTwoRuns('dynamodb', async () => {
      dynamo = await startDynalite();
      const table = await dynamo.createTable();
      return {
        // As a user points the store's own client at DynamoDB Local: the SDK's environment.
        env: {
          IDEMPOTENCY_TABLE: table,
          AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
        },
        close: () => dynamo.stop(),
      };
    });

    it('a store built in the decorator fails the second app, saying it is closed and how to build one per app', async () => {
      const table = await dynamo.createTable();
      await expectSecondAppRefused(
        new DynamoDbIdempotencyStore({ tableName: table, clientConfig: dynamo.clientConfig }),
        'DynamoDbIdempotencyStore',
      );
    });
  });

  postgres.describe('on Postgres', () => {
    let db: TestDatabase;
    describeTwoRuns('postgres', async () => {
      db = await createTestDatabase('shared_store_testing');
      await createIdempotencyTable(db.pool({ max: 1 }));
      return { env: { DATABASE_URL: db.url }, close: () => db.drop() };
    });

    it('a store built in the decorator fails the second app, saying it is closed and how to build one per app', () =>
      expectSecondAppRefused(
        new PostgresIdempotencyStore(db.url, { sweeper: false }),
        'PostgresIdempotencyStore',
      ));
  });

  describe('unit tests: the in-memory store in place of the shared one', () => {
    // A server where Redis would be: the factory's store must never connect to it.
    let decoy: Server;
    let connections = 0;
    const saved = process.env.REDIS_URL;
    beforeAll(async () => {
      decoy = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      if (saved === undefined) delete process.env.REDIS_URL;
      else process.env.REDIS_URL = saved;
      await new Promise((resolve) => decoy.close(resolve));
    });

    for (const redisUrl of ['a decoy server', 'unset']) {
      describe(`REDIS_URL ${redisUrl}`, () => {
        const files = writeRun(`unit-${redisUrl.replace(/\W/g, '-')}`, {
          'src/app.module.ts': sharedStoreModule(),
          'src/idempotency.ts': IDEMPOTENCY,
          'src/orders.unit.spec.ts': UNIT_TEST,
        });
        beforeAll(() => {
          if (redisUrl === 'unset') delete process.env.REDIS_URL;
          else process.env.REDIS_URL = `redis://127.0.0.1:${(decoy.address() as { port: number }).port}`;
        });
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require(files['src/orders.unit.spec.ts']);
      });
    }

    it('opened no connection to Redis', () => expect(connections).toBe(0));
  });
});
