import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { execFile } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import * as ts from 'typescript';
import { userDocs } from './support/doc-files';
import { ensureBuilt } from './support/ensure-built';
import { killOnExit } from './support/kill-on-exit';
import { ReadmeBlock, readmeBlocks } from './support/readme-blocks';

/**
 * README.md and the guides in docs/ are executable. Every `ts` block type-checks against the BUILT
 * package, imported as users import it (`nestjs-idempotent-sqs`, `nestjs-idempotent-sqs/testing`,
 * ...), all of them in one TypeScript program, and the blocks marked `<!-- jest -->` (the Quick
 * start's test) run here as written. An edit that breaks a block fails `npm test`, with the file, the
 * line and the TypeScript error.
 *
 * Markers (an HTML comment on the line right before the fence; see test/support/readme-blocks.js):
 * `<!-- fragment -->` skips a block that is not a whole file; `<!-- fragment: needs a, B, 'pg' -->`
 * checks it with those names declared; `<!-- jest -->` runs it. A first line `// src/x.ts` writes
 * the block at that path, so blocks import each other, across pages too (a path is used once).
 *
 * Alone: `npx jest test/readme.e2e-spec.ts` (builds the package first when dist/ is stale).
 */
const ROOT = join(__dirname, '..');

// Built before any test registers: the blocks marked `jest` import the package at load time.
ensureBuilt();

/** A block and the page it is on (`README.md`, `docs/stores/redis.md`). */
type PageBlock = ReadmeBlock & { page: string };
const blocks: PageBlock[] = userDocs().flatMap((page) =>
  readmeBlocks(readFileSync(join(ROOT, page), 'utf8')).map((block) => ({ ...block, page })),
);
const tsBlocks = blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript');
const checked = tsBlocks.filter(
  (block) =>
    !block.markers.fragment || block.markers.needs.length > 0 || block.markers.needsModules.length > 0,
);

/**
 * The blocks as files of a small app beside the repo: `.readme-check/<pid>/`, whose
 * node_modules/nestjs-idempotent-sqs links to the repo (its package.json `exports` lead to dist/);
 * every other package resolves from the repo's node_modules, one folder up. Outside node_modules,
 * so Jest transforms the blocks it runs; outside lib/ and test/, so nothing else picks them up.
 */
const dir = join(ROOT, '.readme-check', String(process.pid));
interface BlockFile {
  block: PageBlock;
  file: string;
  /** Lines added above the block's code (declarations of what a fragment needs). */
  prelude: number;
}
const files: BlockFile[] = writeProject(checked);

describe('README.md and docs/', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('marks its code blocks only with markers the checker knows', () => {
    const problems = blocks.flatMap((block) =>
      block.markerErrors.map((error) => `${block.page}:${block.fenceLine - 1}: ${error}`),
    );
    const pathless = blocks.filter((block) => block.markers.jest && !block.path);
    problems.push(
      ...pathless.map(
        (block) => `${block.page}:${block.line}: a block marked jest starts with its path (// src/x.spec.ts)`,
      ),
    );
    const withPath = checked.filter((block) => block.path);
    problems.push(
      ...withPath
        .filter((block, i) => withPath.findIndex((other) => other.path === block.path) !== i)
        .map((block) => `${block.page}:${block.line}: two blocks are ${block.path}`),
    );
    expect(problems).toEqual([]);
  });

  it('type-checks every ts block against the built package (fragments aside)', () => {
    expect(checked.length).toBeGreaterThan(0);
    const program = ts.createProgram(
      files.map(({ file }) => file),
      {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.Node16,
        moduleResolution: ts.ModuleResolutionKind.Node16,
        lib: ['lib.es2023.d.ts'],
        strict: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        esModuleInterop: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node', 'jest'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
      },
    );
    const errors = [...ts.getPreEmitDiagnostics(program)]
      .map(describeDiagnostic)
      .sort((a, b) => a.page.localeCompare(b.page) || a.line - b.line)
      .map((error) => error.text);
    if (errors.length > 0) {
      throw new Error(
        `${errors.length} TypeScript error(s) in the docs' code blocks (mark a deliberate fragment ` +
          `<!-- fragment --> on the line before its fence, or <!-- fragment: needs name, ... -->):\n\n${errors.join('\n\n')}`,
      );
    }
  }, 60_000);

  describe('blocks marked <!-- jest -->, run as written', () => {
    const runnable = files.filter(({ block }) => block?.markers.jest);
    it('include the Quick start test', () => expect(runnable.length).toBeGreaterThan(0));
    for (const { file } of runnable) {
      // The block's describe() and it() register here, while Jest loads this spec.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(file);
    }
  });

  // A block written for Node's own runner (its path ends `.node-test.ts`) runs under it, as its page says
  // (`node --require ts-node/register --test`), in a process of its own.
  for (const { block, file } of files.filter(({ block }) => block?.path?.endsWith('.node-test.ts'))) {
    it(`${block.page}: ${block.path} passes under node --test`, async () => {
      const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          ['--require', 'ts-node/register/transpile-only', '--test', '--test-reporter=tap', file],
          { cwd: dir, timeout: 90_000 },
          (error, stdout, stderr) =>
            resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
        );
        killOnExit(child);
      });
      expect(output).toMatch(/^# fail 0$/m);
      expect(output).toMatch(/^# pass [1-9]/m);
      expect(code).toBe(0);
    }, 120_000);
  }
});

function writeProject(selected: PageBlock[]): BlockFile[] {
  removeLeftovers();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'nestjs-idempotent-sqs'), 'dir');
  const modules = new Set<string>();
  const written = selected.map((block) => {
    const page = block.page
      .replace(/\.md$/, '')
      .replace(/[^\w-]+/g, '-')
      .toLowerCase();
    const file = join(dir, block.path ?? `${page}-line-${block.line}.ts`);
    const prelude = block.markers.needs.map((name) => `declare const ${name}: any; type ${name} = any;`);
    block.markers.needsModules.forEach((name) => modules.add(name));
    mkdirSync(dirname(file), { recursive: true });
    // `export {}` makes every block a module of its own, whatever it imports.
    writeFileSync(file, [...prelude, block.code, 'export {};', ''].join('\n'));
    return { block, file, prelude: prelude.length };
  });
  // A module a fragment needs, unless it is installed (then its own types apply), is declared with
  // what the blocks import from it, each an \`any\` usable as a value and as a type.
  const missing = [...modules].filter((name) => !isInstalled(name));
  if (missing.length > 0) {
    const file = join(dir, 'needed-modules.d.ts');
    const declarations = missing.map((name) => {
      const names = importedNames(name, selected);
      const members = names.map(
        (imported) => `  export const ${imported}: any;\n  export type ${imported} = any;`,
      );
      return `declare module '${name}' {\n${members.join('\n')}\n  const whole: any;\n  export default whole;\n}`;
    });
    writeFileSync(file, declarations.join('\n') + '\n');
    written.push({ block: undefined as never, file, prelude: 0 });
  }
  return written;
}

/** The names the blocks import from \`module\` (\`import { A, B as C } from 'module'\`). */
function importedNames(module: string, selected: PageBlock[]): string[] {
  const names = new Set<string>();
  const pattern = new RegExp(`import\\s+(?:type\\s+)?\\{([^}]*)\\}\\s*from\\s*['"]${module}['"]`, 'g');
  for (const block of selected) {
    for (const [, list] of block.code.matchAll(pattern)) {
      for (const item of list.split(',')) {
        const imported = item
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0];
        if (imported) names.add(imported);
      }
    }
  }
  return [...names];
}

/** The folders of earlier runs that were killed before their afterAll (their process is gone). */
function removeLeftovers(): void {
  const parent = dirname(dir);
  for (const entry of existsSync(parent) ? readdirSync(parent) : []) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || isRunning(pid)) continue;
    rmSync(join(parent, entry), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isInstalled(name: string): boolean {
  try {
    require.resolve(`${name}/package.json`, { paths: [ROOT] });
    return true;
  } catch {
    return false;
  }
}

/** `docs/stores/redis.md:123: TS2304 Cannot find name 'x'.` and the line itself. */
function describeDiagnostic(diagnostic: ts.Diagnostic): { page: string; line: number; text: string } {
  const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n    ');
  const where = files.find(({ file }) => file === diagnostic.file?.fileName);
  if (!diagnostic.file || diagnostic.start === undefined || !where?.block) {
    const file = diagnostic.file ? relative(ROOT, diagnostic.file.fileName) : 'the check itself';
    return { page: '', line: 0, text: `${file}: TS${diagnostic.code} ${text}` };
  }
  const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const codeLine = line - where.prelude;
  const pageLine = where.block.line + codeLine;
  const source = where.block.code.split('\n')[codeLine] ?? '';
  return {
    page: where.block.page,
    line: pageLine,
    text: `${where.block.page}:${pageLine}: TS${diagnostic.code} ${text}\n    ${pageLine} | ${source}`,
  };
}
