import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

/**
 * Every name an entry point of the package exports (lib/index.ts and each subpath of package.json
 * "exports") carries a doc comment: the API reference (`npm run docs`, TypeDoc) is generated from
 * them, and a name without one would show there as a bare signature. One TypeScript program over the
 * files of lib/ alone (`noResolve`: the peers' types are never read), not type-checked: a few seconds.
 */
const ROOT = join(__dirname, '..');

/** The source of each entry point: `./dist/cjs/stores/redis/index.d.ts` → `lib/stores/redis/index.ts`. */
function entryPoints(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { require: { types: string } }>;
  };
  const entries: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue; // ./package.json
    const source = target.require.types.replace(/^\.\/dist\/cjs\//, 'lib/').replace(/\.d\.ts$/, '.ts');
    entries[subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`] = join(ROOT, source);
  }
  return entries;
}

/** `name`'s doc comment: the JSDoc of one of its declarations (a class, an interface, a `const` ...). */
function isDocumented(symbol: ts.Symbol, checker: ts.TypeChecker): boolean {
  if (symbol.getDocumentationComment(checker).length > 0) return true;
  // `export const x = ...` keeps its comment on the statement; tags alone (`@deprecated`) count too.
  return (symbol.declarations ?? []).some((declaration) => {
    const holder = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
    return ts.getJSDocCommentsAndTags(holder).length > 0;
  });
}

/** Each entry point's exported names (values and types), each with where it is declared if undocumented. */
function exportedNames(): Record<string, Array<{ name: string; undocumentedAt?: string }>> {
  const entries = entryPoints();
  const sources = readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .map((file) => join(ROOT, 'lib', file));
  const program = ts.createProgram(sources, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    noEmit: true,
    noResolve: true,
    noLib: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const names: ReturnType<typeof exportedNames> = {};
  for (const [name, file] of Object.entries(entries)) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${name}: no entry point at ${relative(ROOT, file)}`);
    const module = checker.getSymbolAtLocation(source)!;
    names[name] = checker.getExportsOfModule(module).map((exported) => {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (isDocumented(symbol, checker)) return { name: exported.name };
      const where = symbol.declarations?.[0];
      const at = where
        ? `${relative(ROOT, where.getSourceFile().fileName)}:${where.getSourceFile().getLineAndCharacterOfPosition(where.getStart()).line + 1}`
        : 'no declaration';
      return { name: exported.name, undocumentedAt: at };
    });
  }
  return names;
}

/** The root entry's budget (issue 35): what only some users need lives on a subpath. */
const ROOT_ENTRY_MAX_NAMES = 60;

/** The `@module` tag of an entry point's opening comment: the name TypeDoc gives its page. */
function moduleName(file: string): string | undefined {
  const opening = /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(file, 'utf8'));
  return opening ? /@module\s+(\S+)/.exec(opening[1])?.[1] : undefined;
}

describe('the API reference', () => {
  it('covers every entry point of package.json "exports"', () => {
    const names = Object.keys(entryPoints());
    expect(names).toContain('nestjs-idempotent-sqs');
    expect(names).toContain('nestjs-idempotent-sqs/testing');
    expect(names.length).toBeGreaterThanOrEqual(6);
  });

  it('opens every entry point with a comment naming it as users import it (@module)', () => {
    const names = Object.entries(entryPoints()).map(([name, file]) => [name, moduleName(file)]);
    expect(names.filter(([name, tagged]) => name !== tagged)).toEqual([]);
  });

  it('has a doc comment for every exported name of every entry point', () => {
    const missing = Object.fromEntries(
      Object.entries(exportedNames())
        .map(([entry, names]) => [
          entry,
          names
            .filter(({ undocumentedAt }) => undocumentedAt !== undefined)
            .map(({ name, undocumentedAt }) => `${name} (${undocumentedAt})`)
            .sort(),
        ])
        .filter(([, names]) => names.length),
    );
    expect(missing).toEqual({});
  }, 60_000);

  it(`keeps the root entry at ${ROOT_ENTRY_MAX_NAMES} names or fewer, values and types together`, () => {
    const root = exportedNames()['nestjs-idempotent-sqs'].map(({ name }) => name);
    expect(root).toContain('IdempotencyModule');
    expect(root.length).toBeLessThanOrEqual(ROOT_ENTRY_MAX_NAMES);
  }, 60_000);
});
