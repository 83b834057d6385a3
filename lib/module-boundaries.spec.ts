import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import { OPTIONAL_PEERS } from './common/optional-peer';

// The published package is two builds of these sources (CommonJS and ES modules), loaded by apps
// that install only the peers of the features they use. These rules keep that true for every file,
// including the ones not written yet; each failure names the file and the line.

const libDir = __dirname;
const rootDir = join(libDir, '..');

/**
 * The package's entry points, as package.json's `exports` names them (`./dist/cjs/x/index.js` is
 * `x/index.ts` here). An entry re-exports from any layer; no file imports one.
 */
const ENTRY_POINTS: string[] = (() => {
  const pkg = JSON.parse(readFileSync(join(rootDir, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { require: { default: string } }>;
  };
  return Object.values(pkg.exports)
    .filter((target) => typeof target !== 'string')
    .map((target) => target.require.default.replace(/^\.\/dist\/cjs\//, '').replace(/\.js$/, '.ts'));
})();
/** The one optional peer an entry exists for: `/microservices` is a transport of `@nestjs/microservices`. */
const PEERS_OF_ENTRY: Record<string, readonly string[]> = {
  'microservices/index.ts': ['@nestjs/microservices'],
};
const optionalPeers = new Set(Object.keys(OPTIONAL_PEERS));
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

interface ModuleReference {
  specifier: string;
  /** `import type` / `export type`: erased from both builds. */
  typeOnly: boolean;
  /** `import('x')`: loaded when called, not when the module loads. */
  dynamic: boolean;
  line: number;
}

function sourceOf(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

function referencesOf(source: ts.SourceFile): ModuleReference[] {
  const found: ModuleReference[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      // Only `import type` counts: `import { type X }` keeps a side-effect import under verbatimModuleSyntax.
      const typeOnly = node.importClause?.isTypeOnly ?? false;
      found.push({ specifier: node.moduleSpecifier.text, typeOnly, dynamic: false, line: lineOf(node) });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push({
        specifier: node.moduleSpecifier.text,
        typeOnly: node.isTypeOnly,
        dynamic: false,
        line: lineOf(node),
      });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) {
        found.push({ specifier: arg.text, typeOnly: false, dynamic: true, line: lineOf(node) });
      }
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) {
        found.push({
          specifier: expression.text,
          typeOnly: node.isTypeOnly,
          dynamic: false,
          line: lineOf(node),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveRelative(fromFile: string, specifier: string): string {
  const base = resolve(dirname(fromFile), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next candidate
    }
  }
  throw new Error(`${relative(libDir, fromFile)} imports ${specifier}, which is not a file in lib/`);
}

/** Every module `entry` loads when it is loaded (static, non-type imports, transitively), with how. */
function loadedAtStartup(entry: string): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  const queue = [[join(libDir, entry)]];
  while (queue.length > 0) {
    const chain = queue.shift()!;
    const file = chain[chain.length - 1];
    if (chains.has(file)) continue;
    chains.set(file, chain);
    for (const reference of referencesOf(sourceOf(file))) {
      if (reference.typeOnly || reference.dynamic || !reference.specifier.startsWith('.')) continue;
      queue.push([...chain, resolveRelative(file, reference.specifier)]);
    }
  }
  return chains;
}

function libSources(dir = libDir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return libSources(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

const where = (file: string, line: number) => `lib/${relative(libDir, file)}:${line}`;
const libPath = (file: string) => relative(libDir, file).split('\\').join('/');

/**
 * The house, floor by floor from the ground: each folder of lib/ is a room on one floor (with its
 * subfolders, unless they are rooms of their own). A file imports files of its own room, or of a
 * lower floor: never up, and never sideways into another room of its floor. Hosts turn their input
 * into records (SqsServer polls with the polling host's consumers, so it stands a floor higher); the
 * Nest wiring (sqs/nest/) finds the handlers and holds SqsModule's queues, routing (sqs/routing/)
 * decodes a record and finds its handler, the pipeline (sqs/pipeline/) runs records under the batch
 * rules, all on the words users import (sqs/'s own files); the SDK client (sqs/sdk/) serves the
 * polling host and the producer; the claim logic knows no SQS; the stores know no claim logic; everything
 * may use the common errors. Observability stands beside the hosts: the claim and the pipeline feed it
 * through their `RecordObserver`, bound by `IdempotencyModule`, and import nothing of it. lib/'s own
 * files are the top: the root entry and the Nest modules that wire the floors together.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['common/'],
  ['stores/'],
  ['stores/in-memory/', 'stores/redis/', 'stores/dynamodb/', 'stores/postgres/'],
  ['idempotency/'],
  ['sqs/'],
  ['sqs/pipeline/', 'sqs/sdk/'],
  ['sqs/routing/'],
  ['sqs/nest/'],
  ['lambda/', 'sqs/consumer/', 'sqs/producer/', 'observability/'],
  ['microservices/', 'center/'],
  ['testing/'],
  [''],
];

/** The room of a file (its folder, or the nearest listed one above it) and the floor it stands on. */
function roomOf(path: string): { room: string; floor: number } | undefined {
  let found: { room: string; floor: number } | undefined;
  FLOORS.forEach((rooms, floor) => {
    for (const room of rooms) {
      const inside = room === '' ? !path.includes('/') : path.startsWith(room);
      if (inside && (found === undefined || room.length > found.room.length)) found = { room, floor };
    }
  });
  return found;
}

/** Why importing `to` from `from` breaks the house, or `undefined` when it does not. */
function misplacedImport(from: string, to: string): string | undefined {
  if (ENTRY_POINTS.includes(to)) return 'imports an entry point';
  if (ENTRY_POINTS.includes(from)) return undefined;
  const [a, b] = [roomOf(from), roomOf(to)];
  if (a === undefined || b === undefined || a.room === b.room || b.floor < a.floor) return undefined;
  const name = (room: string) => (room === '' ? 'lib/' : room);
  return b.floor > a.floor
    ? `${name(a.room)} imports ${name(b.room)}, a floor above it`
    : `${name(a.room)} imports ${name(b.room)}, beside it on its floor`;
}

/** Every file's relative imports (type-only and dynamic ones included), by lib path. */
function importGraph(): Map<string, { target: string; line: number }[]> {
  const graph = new Map<string, { target: string; line: number }[]>();
  for (const file of libSources()) {
    graph.set(
      libPath(file),
      referencesOf(sourceOf(file))
        .filter(({ specifier }) => specifier.startsWith('.'))
        .map(({ specifier, line }) => ({ target: libPath(resolveRelative(file, specifier)), line })),
    );
  }
  return graph;
}

/** The groups of files that import each other in a loop (strongly connected components of two or more). */
function cyclesOf(graph: ReadonlyMap<string, readonly { target: string }[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const { target } of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const cycle = stack.splice(stack.indexOf(file));
      if (cycle.length > 1) cycles.push(cycle.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

describe('module boundaries of the published package', () => {
  it('loads no optional peer when an entry point loads (import type, or optionalPeer() when used)', () => {
    const violations: string[] = [];
    for (const entry of ENTRY_POINTS) {
      const ownPeers = PEERS_OF_ENTRY[entry] ?? [];
      for (const [file, chain] of loadedAtStartup(entry)) {
        for (const reference of referencesOf(sourceOf(file))) {
          const peer = packageOf(reference.specifier);
          if (reference.typeOnly || reference.dynamic || !optionalPeers.has(peer) || ownPeers.includes(peer))
            continue;
          violations.push(
            `${where(file, reference.line)} imports "${reference.specifier}" at load time ` +
              `(${chain.map((step) => relative(libDir, step)).join(' → ')}); ` +
              'use `import type`, or load it with optionalPeer() where the feature starts',
          );
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('sees every entry point and the modules behind it (the check above is not vacuous)', () => {
    expect(ENTRY_POINTS).toEqual(
      expect.arrayContaining(['index.ts', 'testing/index.ts', 'stores/redis/index.ts']),
    );
    const loaded = [...loadedAtStartup('index.ts').keys()].map(libPath);
    expect(loaded).toEqual(
      expect.arrayContaining([
        'sqs.module.ts',
        'lambda/create-sqs-lambda-handler.ts',
        'sqs/nest/sqs-queue.registry.ts',
      ]),
    );
  });

  it('keeps the house: every import points down a floor or stays in its room', () => {
    const unhoused = libSources()
      .map(libPath)
      .filter((path) => roomOf(path) === undefined);
    const violations = [...importGraph()].flatMap(([from, imports]) =>
      imports.flatMap(({ target, line }) => {
        const why = misplacedImport(from, target);
        return why ? [`lib/${from}:${line} imports ${target}: ${why}`] : [];
      }),
    );
    expect(unhoused).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('has no two files importing each other, even through others or for types only', () => {
    expect(cyclesOf(importGraph())).toEqual([]);
  });

  it('places every floor where the house says, and sees what breaks it (the checks above are not vacuous)', () => {
    const folders = (dir: string): string[] =>
      readdirSync(join(libDir, dir), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .flatMap((entry) => [`${dir}${entry.name}/`, ...folders(`${dir}${entry.name}/`)]);
    // Every room is a folder that exists, and every folder is a room or inside one.
    expect(FLOORS.flat().filter((room) => room !== '' && !folders('').includes(room))).toEqual([]);
    expect(folders('').filter((folder) => roomOf(`${folder}x.ts`) === undefined)).toEqual([]);
    expect(
      [
        'idempotency.module.ts',
        'lambda/create-sqs-lambda-handler.ts',
        'sqs/consumer/sqs-queue.consumer.ts',
        'sqs/nest/sqs-queue.registry.ts',
        'sqs/routing/envelopes/sns.envelope.ts',
        'sqs/pipeline/sqs-record.pipeline.ts',
        'sqs/sdk/sqs-client.factory.ts',
        'sqs/sqs-context.ts',
        'idempotency/idempotency.service.ts',
        'stores/redis/redis-idempotency.store.ts',
        'stores/idempotency-store.interface.ts',
      ].map((path) => roomOf(path)?.room),
    ).toEqual([
      '',
      'lambda/',
      'sqs/consumer/',
      'sqs/nest/',
      'sqs/routing/',
      'sqs/pipeline/',
      'sqs/sdk/',
      'sqs/',
      'idempotency/',
      'stores/redis/',
      'stores/',
    ]);
    expect(
      misplacedImport('stores/redis/redis-idempotency.store.ts', 'idempotency/idempotency.service.ts'),
    ).toBe('stores/redis/ imports idempotency/, a floor above it');
    expect(misplacedImport('sqs/nest/sqs-queue.registry.ts', 'observability/record-counters.ts')).toBe(
      'sqs/nest/ imports observability/, a floor above it',
    );
    expect(misplacedImport('sqs/sqs-context.ts', 'sqs/pipeline/sqs-record.pipeline.ts')).toBe(
      'sqs/ imports sqs/pipeline/, a floor above it',
    );
    expect(misplacedImport('sqs/pipeline/sqs-record.pipeline.ts', 'sqs/routing/sqs-queue.router.ts')).toBe(
      'sqs/pipeline/ imports sqs/routing/, a floor above it',
    );
    expect(misplacedImport('sqs/routing/sqs-queue.router.ts', 'sqs/nest/sqs-handler.explorer.ts')).toBe(
      'sqs/routing/ imports sqs/nest/, a floor above it',
    );
    expect(misplacedImport('sqs/pipeline/sqs-record.sink.ts', 'sqs/sdk/sqs-peers.ts')).toBe(
      'sqs/pipeline/ imports sqs/sdk/, beside it on its floor',
    );
    expect(
      misplacedImport('sqs/nest/sqs-queue.registry.ts', 'sqs/routing/sqs-queue.router.ts'),
    ).toBeUndefined();
    expect(misplacedImport('lambda/sqs-lambda.module.ts', 'sqs/consumer/sqs-consumer.manager.ts')).toBe(
      'lambda/ imports sqs/consumer/, beside it on its floor',
    );
    expect(
      misplacedImport('stores/redis/index.ts', 'observability/redis-idempotency-stats.store.ts'),
    ).toBeUndefined();
    expect(
      misplacedImport('sqs/pipeline/sqs-record.pipeline.ts', 'idempotency/idempotency.service.ts'),
    ).toBeUndefined();
    expect(
      cyclesOf(
        new Map([
          ['a.ts', [{ target: 'b.ts' }]],
          ['b.ts', [{ target: 'c.ts' }]],
          ['c.ts', [{ target: 'a.ts' }]],
          ['d.ts', [{ target: 'a.ts' }]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('uses only package entry points, never deep paths into another package', () => {
    // Nest 12 and most ESM packages close their internals with `exports`; this package's own
    // sources are reached by relative paths.
    const allowedSubpaths = new Set(['rxjs/operators']);
    const violations = libSources().flatMap((file) =>
      referencesOf(sourceOf(file))
        .filter(({ specifier }) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
        .filter(({ specifier }) => specifier !== packageOf(specifier) && !allowedSubpaths.has(specifier))
        .map(({ specifier, line }) => `${where(file, line)} imports the deep path "${specifier}"`),
    );
    expect(violations).toEqual([]);
  });

  it('uses nothing that exists in only one of the two builds (require, __dirname, import.meta)', () => {
    // The CommonJS build has no `import.meta`; the ES build has no `require`, `module`, `__dirname`
    // or `__filename`. Optional peers load with optionalPeer(() => import('x')), which works in both.
    const cjsOnly = new Set(['require', 'module', 'exports', '__dirname', '__filename']);
    const violations: string[] = [];
    for (const file of libSources()) {
      const source = sourceOf(file);
      const visit = (node: ts.Node): void => {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
          violations.push(`${where(file, line)} uses import.meta`);
        } else if (ts.isIdentifier(node) && cjsOnly.has(node.text) && isValueReference(node)) {
          violations.push(`${where(file, line)} uses ${node.text}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(violations).toEqual([]);
  });
});

/** An identifier read as a free variable (not a property name, declaration or type). */
function isValueReference(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
  if (ts.isPropertyAssignment(parent) && parent.name === node) return false;
  if ((ts.isMethodDeclaration(parent) || ts.isPropertyDeclaration(parent)) && parent.name === node)
    return false;
  if (
    (ts.isParameter(parent) || ts.isVariableDeclaration(parent) || ts.isBindingElement(parent)) &&
    parent.name === node
  ) {
    return false;
  }
  if (ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent) || ts.isImportClause(parent)) return false;
  if (ts.isTypeReferenceNode(parent) || ts.isQualifiedName(parent)) return false;
  if (ts.isPropertySignature(parent) || ts.isMethodSignature(parent)) return false;
  return true;
}
