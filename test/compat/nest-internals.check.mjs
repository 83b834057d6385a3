// Pins every Nest internal that lib/common/nest-internals.ts (and nest-enhancer-internals.ts) relies on, in every test:compat cell (NestJS 11
// and 12, CommonJS and ES builds, Node 20/22/24): each pin drives the library's own function, as
// built into the installed package, against the installed Nest, and asserts the effect the library
// needs. The library degrades quietly when an internal is gone (a warning, a second log line, Nest's
// slower pipeline); this check is where a new Nest that drops one shows up, by name.
//
// Run by run-compat.mjs from the cell's folder (`node nest-internals.check.mjs`): the library build
// matching the cell's module system (COMPAT_MODULE), Nest loaded the same way, so both share one copy.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const esm = process.env.COMPAT_MODULE === 'esm';
const load = async (name) => (esm ? import(name) : require(name));

await load('reflect-metadata');
const common = await load('@nestjs/common');
const core = await load('@nestjs/core');
// nest-internals is no entry point of the package (it is internal): its file in the build is loaded.
const packageDir = dirname(require.resolve('nestjs-idempotent-sqs/package.json'));
// The direct call's own internals are in a file of their own (loaded with it): both are pinned here.
const loadInternals = async (name) => {
  const file = join(packageDir, 'dist', esm ? 'esm' : 'cjs', 'common', `${name}.js`);
  return esm ? import(pathToFileURL(file).href) : require(file);
};
const internals = {
  ...(await loadInternals('nest-internals')),
  ...(await loadInternals('nest-enhancer-internals')),
};
const { Logger } = common;

const failures = [];
async function pin(name, check) {
  try {
    await check();
    console.log(`  ok  ${name}`);
  } catch (error) {
    failures.push(name);
    console.log(`  FAILED  ${name}\n${String(error?.stack ?? error).replace(/^/gm, '      ')}`);
  }
}

/** Applies decorators as TypeScript's `__decorate` does, so this file needs no compiler. */
const decorate = (decorators, target, key) => {
  const descriptor = key === undefined ? undefined : Object.getOwnPropertyDescriptor(target, key);
  for (const decorator of [...decorators].reverse()) decorator(target, key, descriptor);
};
const injectable = (cls, paramTypes = []) => {
  decorate([common.Injectable()], cls);
  Reflect.defineMetadata('design:paramtypes', paramTypes, cls);
};
const moduleOf = (cls, metadata) => decorate([common.Module(metadata)], cls);
const quietApp = (module) => core.NestFactory.createApplicationContext(module, { logger: false });

// The logger pins come first: they need Nest's logger as a fresh process has it.
await pin('Logger.logLevels (private static): the levels an app restricted Nest to', () => {
  assert.equal(Logger.logLevels, undefined, 'unset until an app restricts levels');
  assert.equal(internals.isLogLevelEnabled('debug'), true, 'all levels on when unrestricted');
  Logger.overrideLogger(['error', 'warn']);
  assert.deepEqual(Logger.logLevels, ['error', 'warn']);
  assert.equal(internals.isLogLevelEnabled('log'), false, 'a level the app turned off');
  assert.equal(internals.isLogLevelEnabled('warn'), true);
  Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
});

await pin('Logger.staticInstanceRef (private static): cleared by logger: false', () => {
  assert.equal(internals.isNestLoggerSilenced(), false, 'a fresh logger prints');
  Logger.overrideLogger(false);
  assert.equal(internals.isNestLoggerSilenced(), true, 'logger: false prints nothing');
});

await pin('ROUTE_ARGS_METADATA and CUSTOM_ROUTE_ARGS_METADATA: where parameter decorators write', () => {
  const Tag = common.createParamDecorator((data) => data);
  class Pipe {}
  class Handlers {
    handle() {}
  }
  Tag('key')(Handlers.prototype, 'handle', 1);
  Tag('piped', Pipe)(Handlers.prototype, 'handle', 2);
  const args = Reflect.getMetadata(internals.NEST_ROUTE_ARGS_METADATA, Handlers, 'handle');
  assert.ok(args && typeof args === 'object', `nothing under ${internals.NEST_ROUTE_ARGS_METADATA}`);
  const entries = Object.entries(args);
  assert.equal(entries.length, 2);
  for (const [key, param] of entries) {
    assert.ok(key.includes(internals.NEST_CUSTOM_ROUTE_ARGS_METADATA), `custom parameter key ${key}`);
    assert.equal(typeof param.factory, 'function');
  }
  const byIndex = new Map(entries.map(([, param]) => [param.index, param]));
  assert.deepEqual([byIndex.get(1).data, byIndex.get(1).pipes], ['key', []]);
  assert.deepEqual([byIndex.get(2).data, byIndex.get(2).pipes], ['piped', [Pipe]]);
});

await pin(
  'GUARDS/INTERCEPTORS/PIPES/EXCEPTION_FILTERS metadata keys of @UseX(), on classes and methods',
  () => {
    const uses = {
      guards: common.UseGuards,
      interceptors: common.UseInterceptors,
      pipes: common.UsePipes,
      filters: common.UseFilters,
    };
    assert.deepEqual(Object.keys(internals.NEST_ENHANCER_METADATA).sort(), Object.keys(uses).sort());
    for (const [kind, use] of Object.entries(uses)) {
      const key = internals.NEST_ENHANCER_METADATA[kind];
      class Enhancer {}
      class Handlers {
        handle() {}
      }
      decorate([use(Enhancer)], Handlers);
      decorate([use(Enhancer)], Handlers.prototype, 'handle');
      assert.deepEqual(Reflect.getMetadata(key, Handlers), [Enhancer], `${kind} of a class under ${key}`);
      assert.deepEqual(
        Reflect.getMetadata(key, Handlers.prototype.handle),
        [Enhancer],
        `${kind} of a method under ${key}`,
      );
    }
  },
);

await pin('Module.distance: lifecycle hooks ordered around every other module', async () => {
  const events = [];
  const hooks = (name) => ({
    onModuleInit: () => void events.push(`${name}:init`),
    onApplicationBootstrap: () => void events.push(`${name}:bootstrap`),
    onModuleDestroy: () => void events.push(`${name}:destroy`),
  });
  class Host {
    constructor(modules) {
      this.ordered = internals.runHooksAroundEveryOtherModule(modules, Host);
    }
  }
  Object.assign(Host.prototype, hooks('host'));
  injectable(Host, [core.ModulesContainer]);
  class Other {}
  Object.assign(Other.prototype, hooks('other'));
  injectable(Other);
  class Root {}
  Object.assign(Root.prototype, hooks('root'));
  // Global, as SqsModule is: without the rewrite Nest would start it first and close it last.
  class HostModule {}
  moduleOf(HostModule, { providers: [Host], exports: [Host] });
  decorate([common.Global()], HostModule);
  class OtherModule {}
  moduleOf(OtherModule, { providers: [Other] });
  moduleOf(Root, { imports: [HostModule, OtherModule] });
  const app = await quietApp(Root);
  await app.init();
  assert.equal(app.get(Host).ordered, true, 'runHooksAroundEveryOtherModule found no distances');
  await app.close();
  const at = (event) => events.indexOf(event);
  for (const other of ['other', 'root']) {
    assert.ok(at('host:init') > at(`${other}:init`), `host inits after ${other}: ${events}`);
    assert.ok(at('host:bootstrap') > at(`${other}:bootstrap`), `host bootstraps after ${other}: ${events}`);
    assert.ok(at('host:destroy') < at(`${other}:destroy`), `host closes before ${other}: ${events}`);
  }
});

await pin('ModulesContainer.getRpcTargetRegistry(): the transports an app announces', async () => {
  class Root {}
  moduleOf(Root, {});
  let microservices;
  try {
    microservices = await load('@nestjs/microservices');
  } catch {
    microservices = undefined; // the bare app: no transport can exist, the registry is all there is
  }
  const strategy = { listen: (callback) => callback(), close: () => undefined, on() {}, unwrap() {} };
  const app = microservices
    ? await core.NestFactory.createMicroservice(Root, { strategy, logger: false })
    : await quietApp(Root);
  const modules = app.get(core.ModulesContainer);
  const registry = internals.rpcTargetsOf(modules);
  assert.ok(registry, 'ModulesContainer has no getRpcTargetRegistry()');
  if (!microservices) modules.addRpcTarget(strategy);
  const seen = [];
  // Subscribed after the announcement, as SqsModule may be: the registry replays it.
  registry.subscribe((target) => seen.push(target)).unsubscribe();
  assert.deepEqual(seen, [strategy]);
  await app.close();
});

await pin(
  "ApplicationConfig through ExternalContextCreator's guardsContextCreator: global enhancers",
  async () => {
    class Interceptor {
      intercept(_context, next) {
        return next.handle();
      }
    }
    injectable(Interceptor);
    class Plain {}
    moduleOf(Plain, {});
    class WithInterceptor {}
    moduleOf(WithInterceptor, { providers: [{ provide: core.APP_INTERCEPTOR, useClass: Interceptor }] });
    for (const [module, expected] of [
      [Plain, 0],
      [WithInterceptor, 1],
    ]) {
      const app = await quietApp(module);
      await app.init();
      assert.equal(
        internals.globalEnhancerCount(app.get(core.ExternalContextCreator)),
        expected,
        module.name,
      );
      await app.close();
    }
  },
);

await pin(
  'externalErrorProxy and invokeCustomFilters: no default log line for an unfiltered error',
  async () => {
    const lines = [];
    const capture = (...args) => void lines.push(String(args[0]?.message ?? args[0]));
    class Handlers {
      async handle() {
        throw new Error('handler failed');
      }
    }
    injectable(Handlers);
    class Root {}
    moduleOf(Root, { providers: [Handlers] });
    const app = await quietApp(Root);
    await app.init();
    const creator = app.get(core.ExternalContextCreator);
    const quiet = internals.withoutDefaultErrorLog(creator);
    assert.notEqual(quiet, creator, 'ExternalContextCreator has no externalErrorProxy');
    const instance = app.get(Handlers);
    const options = { guards: true, interceptors: true, filters: true };
    const call = (through) =>
      through.create(
        instance,
        instance.handle,
        'handle',
        undefined,
        undefined,
        undefined,
        undefined,
        options,
        'sqs',
      );
    Logger.overrideLogger({ log: capture, error: capture, warn: capture, debug: capture, verbose: capture });
    try {
      await assert.rejects(call(creator)({}, {}), /handler failed/);
      assert.deepEqual(lines, ['handler failed'], "Nest's default filter logs it (what is removed)");
      lines.length = 0;
      await assert.rejects(call(quiet)({}, {}), /handler failed/);
      assert.deepEqual(lines, [], 'logged although no filter handled it');
    } finally {
      Logger.overrideLogger(false);
      await app.close();
    }
  },
);

// Not Nest's, but read the same way: class-transformer's metadata storage, where the direct event
// mapping (lib/sqs/routing/plain-event.mapper.ts) reads which classes have decorators. Without it, every
// event still maps, through plainToInstance (slower).
await pin('class-transformer defaultMetadataStorage: the direct event mapping is usable', async () => {
  const mapperFile = join(packageDir, 'dist', esm ? 'esm' : 'cjs', 'sqs', 'routing', 'plain-event.mapper.js');
  const mapper = esm ? await import(pathToFileURL(mapperFile).href) : require(mapperFile);
  assert.equal(await mapper.loadPlainEventMapper(), true);
});

// Nest 12 exports no package.json; the installed one sits beside this package (npm installs flat).
const nest = JSON.parse(
  readFileSync(join(packageDir, '..', '@nestjs', 'core', 'package.json'), 'utf8'),
).version;
if (failures.length > 0) {
  console.error(`Nest ${nest}: ${failures.length} internal(s) changed shape: ${failures.join('; ')}`);
  process.exit(1);
}
console.log(`Nest ${nest}: every internal of lib/common/nest-internals.ts holds`);
