import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import { OPTIONAL_PEERS } from './optional-peer';

// The published package is two builds of these sources (CommonJS and ES modules), loaded by apps
// that install only the peers of the features they use. These rules keep that true for every file,
// including the ones not written yet; each failure names the file and the line.

const libDir = __dirname;
const ENTRY_POINTS = [
  'index.ts',
  'testing/index.ts',
  'stores/redis/index.ts',
  'stores/dynamodb/index.ts',
  'stores/postgres/index.ts',
];
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

/** Every module an entry point loads when it is loaded (static, non-type imports, transitively). */
function loadedAtStartup(): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  const queue = ENTRY_POINTS.map((entry) => [join(libDir, entry)]);
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

/**
 * The house: hosts → pipeline → idempotency → stores. A file may import files of its own layer and
 * of the layers below it, never above: a store knows nothing of the claim logic, the claim logic
 * nothing of SQS records, the pipeline nothing of which host feeds it. First match wins.
 */
const LAYERS: ReadonlyArray<readonly [Layer, RegExp]> = [
  // Re-export the public API: they may import anything, nothing imports them.
  ['entry', /^(index|microservices\/index|stores\/[^/]+\/index)\.ts$|^testing\//],
  // The words every layer speaks: constants, errors, the handler decorators' metadata and its one
  // accessor, the producer's options (part of SqsModule's). Anyone may import them; they import only
  // each other, or types (a decorator's options name the shape of what they configure).
  [
    'vocabulary',
    /^(constants|sqs-idempotency\.error|optional-peer|nest-internals|handler-discovery)\.ts$|\.(errors?|exception)\.ts$|^sqs\/(sqs-event|sqs-message-handler|consumer\/sqs-consumer-event)\.decorator\.ts$|^sqs\/producer\/sqs-producer\.options\.ts$/,
  ],
  // Turn their input into records and acks (Lambda, polling, SqsServer), or read what happened (the
  // Center); SqsModule wires the polling host and the producer.
  [
    'hosts',
    /^(lambda|microservices|center)\/|^sqs\/(consumer|producer)\/|^sqs\/(sqs\.module|sqs\.module-definition|sqs-transport\.binder)\.ts$/,
  ],
  // Record outcomes: what the idempotency layer's outcomes and a handler's exceptions mean for a
  // record; the pipeline, the interceptor and the counters all read them.
  ['idempotency', /^sqs\/record-outcome\.ts$/],
  ['pipeline', /^sqs\//],
  // The claim, and the counters and journal it feeds (with the report that reads them).
  ['idempotency', /^(idempotency|observability)\//],
  ['stores', /^stores\//],
];
type Layer = 'entry' | 'vocabulary' | 'hosts' | 'pipeline' | 'idempotency' | 'stores';
const HEIGHT: Record<Exclude<Layer, 'entry'>, number> = {
  vocabulary: 0,
  stores: 1,
  idempotency: 2,
  pipeline: 3,
  hosts: 4,
};

/** The layer of a file, by its path under lib/. */
function layerOf(path: string): Layer | undefined {
  return LAYERS.find(([, pattern]) => pattern.test(path))?.[0];
}

/** Why importing `to` from `from` points up the house, or `undefined` when it does not. */
function upwardArrow(from: string, to: string, typeOnly: boolean): string | undefined {
  const [a, b] = [layerOf(from), layerOf(to)];
  if (a === undefined || b === undefined || a === 'entry') return undefined;
  if (b === 'entry') return `${a} imports an entry point`;
  if (a === 'vocabulary' && typeOnly) return undefined;
  return HEIGHT[b] > HEIGHT[a] ? `${a} imports ${b}` : undefined;
}

describe('module boundaries of the published package', () => {
  it('loads no optional peer when an entry point loads (import type, or optionalPeer() when used)', () => {
    const violations: string[] = [];
    for (const [file, chain] of loadedAtStartup()) {
      for (const reference of referencesOf(sourceOf(file))) {
        if (reference.typeOnly || reference.dynamic || !optionalPeers.has(packageOf(reference.specifier)))
          continue;
        violations.push(
          `${where(file, reference.line)} imports "${reference.specifier}" at load time ` +
            `(entry → ${chain.map((step) => relative(libDir, step)).join(' → ')}); ` +
            'use `import type`, or load it with optionalPeer() where the feature starts',
        );
      }
    }
    expect(violations).toEqual([]);
  });

  it('sees every entry point and the modules behind it (the check above is not vacuous)', () => {
    const loaded = [...loadedAtStartup().keys()].map((file) => relative(libDir, file));
    expect(loaded).toEqual(
      expect.arrayContaining([...ENTRY_POINTS, 'sqs/sqs.module.ts', 'lambda/create-sqs-lambda-handler.ts']),
    );
  });

  it('keeps the house: hosts → pipeline → idempotency → stores, no import pointing back up', () => {
    const unassigned: string[] = [];
    const violations: string[] = [];
    for (const file of libSources()) {
      const path = relative(libDir, file).split('\\').join('/');
      if (layerOf(path) === undefined) unassigned.push(path);
      for (const reference of referencesOf(sourceOf(file))) {
        if (!reference.specifier.startsWith('.')) continue;
        const target = relative(libDir, resolveRelative(file, reference.specifier)).split('\\').join('/');
        const why = upwardArrow(path, target, reference.typeOnly);
        if (why) violations.push(`${where(file, reference.line)} imports ${target}: ${why}`);
      }
    }
    expect(unassigned).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('places each host, the pipeline, the claim and the stores where the house says (the check above is not vacuous)', () => {
    expect(
      [
        'lambda/create-sqs-lambda-handler.ts',
        'sqs/consumer/sqs-queue.consumer.ts',
        'microservices/sqs.server.ts',
        'center/idempotency-center.service.ts',
        'sqs/sqs-record-pipeline.ts',
        'sqs/sqs-dispatcher.ts',
        'idempotency/idempotency.service.ts',
        'observability/record-counters.ts',
        'stores/redis/redis-idempotency.store.ts',
        'idempotency/idempotency.errors.ts',
      ].map(layerOf),
    ).toEqual([
      'hosts',
      'hosts',
      'hosts',
      'hosts',
      'pipeline',
      'pipeline',
      'idempotency',
      'idempotency',
      'stores',
      'vocabulary',
    ]);
    expect(
      upwardArrow('stores/redis/redis-idempotency.store.ts', 'idempotency/idempotency.service.ts', false),
    ).toBe('stores imports idempotency');
    expect(upwardArrow('idempotency/idempotency.interceptor.ts', 'sqs/sqs-context.ts', true)).toBe(
      'idempotency imports pipeline',
    );
    expect(
      upwardArrow('sqs/sqs-record-pipeline.ts', 'idempotency/idempotency.service.ts', false),
    ).toBeUndefined();
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
