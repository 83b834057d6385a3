import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeLinesOf, entryClosure, globPattern, libSourceFiles } from './support/code-size';

/**
 * The feature ledger of docs/ARCHITECTURE.md stays true (issue 50): each row's lines of code are
 * recomputed from its files' globs (the counting rule of test/support/code-size.ts), and so are the
 * totals; a row whose figure drifted fails naming it and the right figure. Within a table a file counts in
 * the first row whose globs take it, so the rows of the newest features (listed first) claim their files
 * wherever they live. Each spec a row names exists, unless the row has no file yet.
 */

const ROOT = join(__dirname, '..');
const LEDGER_HEADING = '## Feature ledger';
// Issue 50's bound: what every app loads, whatever it uses (docs/ARCHITECTURE.md, "Feature ledger").
const ROOT_ENTRY_LIMIT = 5_000;

interface LedgerTable {
  header: string[];
  rows: string[][];
}

/** The tables of the ledger section, each with its header cells and its rows' cells. */
function ledgerTables(): LedgerTable[] {
  const text = readFileSync(join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const start = text.indexOf(`\n${LEDGER_HEADING}\n`);
  if (start < 0) throw new Error(`docs/ARCHITECTURE.md has no "${LEDGER_HEADING}" section`);
  const next = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, next < 0 ? undefined : next);
  const tables: LedgerTable[] = [];
  let table: LedgerTable | undefined;
  for (const line of section.split('\n')) {
    if (!line.startsWith('|')) {
      table = undefined;
      continue;
    }
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split('|')
      .map((cell) => cell.trim());
    if (table === undefined)
      tables.push((table = { header: cells.map((cell) => cell.toLowerCase()), rows: [] }));
    else if (!cells.every((cell) => /^:?-+:?$/.test(cell))) table.rows.push(cells);
  }
  return tables;
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
const figure = (cell: string): number => Number(cell.replace(/[*,\s]/g, ''));
const format = (lines: number): string => lines.toLocaleString('en-US');
const sum = (files: readonly string[]): number => files.reduce((total, file) => total + codeLinesOf(file), 0);

/** Every file a test could name: specs next to the code and under test/. */
function specFiles(): string[] {
  return ['lib', 'test']
    .flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map(
        (file) => `${dir}/${file.split('\\').join('/')}`,
      ),
    )
    .filter((file) => /\.(spec|e2e-spec|long-spec)\.ts$/.test(file));
}

/** A table of parts: each row's files (first row wins), as the table names them. */
function partsOf(
  table: LedgerTable,
): Array<{ name: string; files: string[]; stated: string; specs: string[] }> {
  const column = (name: string) => table.header.indexOf(name);
  const [part, files, lines, specs] = ['part', 'files', 'lines of code', 'specs'].map(column);
  const taken = new Set<string>();
  const all = libSourceFiles();
  return table.rows.map((cells) => {
    const patterns = backticked(cells[files]).map(globPattern);
    const mine = all.filter((file) => !taken.has(file) && patterns.some((pattern) => pattern.test(file)));
    mine.forEach((file) => taken.add(file));
    return {
      name: cells[part].replace(/\*/g, ''),
      files: mine,
      stated: cells[lines],
      specs: specs < 0 ? [] : backticked(cells[specs]),
    };
  });
}

describe('the feature ledger (docs/ARCHITECTURE.md)', () => {
  const tables = ledgerTables();
  const partTables = tables.filter((table) => table.header.includes('files'));
  const [optionalParts] = partTables;

  it('has the tables it is read from (the checks below are not vacuous)', () => {
    expect(partTables.length).toBeGreaterThanOrEqual(1);
    expect(partsOf(optionalParts).map((row) => row.name)).toEqual(
      expect.arrayContaining([
        'Tracing',
        'Batch handlers',
        'Lambda host',
        'Idempotency Center',
        'Redis store',
      ]),
    );
    expect(tables.some((table) => table.header.includes('figure'))).toBe(true);
  });

  it("states each part's lines of code as its files count them", () => {
    const drifted = partTables.flatMap((table) =>
      partsOf(table).flatMap(({ name, files, stated }) => {
        const right = sum(files);
        return figure(stated) === right
          ? []
          : [`"${name}": ${format(right)} lines of code (the ledger says ${stated})`];
      }),
    );
    expect(drifted).toEqual([]);
  });

  it('names specs that exist, for each part that has files', () => {
    const specs = specFiles();
    const missing = partTables.flatMap((table) =>
      partsOf(table).flatMap(({ name, files, specs: named }) =>
        files.length === 0
          ? []
          : named
              .filter((glob) => !specs.some((file) => globPattern(glob).test(file)))
              .map((glob) => `"${name}" names ${glob}, which matches no spec`),
      ),
    );
    expect(missing).toEqual([]);
  });

  it('states the totals: lib/, its optional parts, the core, the root entry', () => {
    const lib = libSourceFiles();
    const optional = new Set(partsOf(optionalParts).flatMap((row) => row.files));
    const right: Record<string, number> = {
      'lib/': sum(lib),
      'the optional parts': sum([...optional]),
      'the core': sum(lib.filter((file) => !optional.has(file))),
      'the root entry': sum(entryClosure('lib/index.ts')),
    };
    const totals = tables.find((table) => table.header.includes('figure'))!;
    const [what, lines] = ['figure', 'lines of code'].map((name) => totals.header.indexOf(name));
    const stated = Object.fromEntries(
      totals.rows.map((cells) => {
        const key = Object.keys(right).find((name) => cells[what].includes(name));
        return [key ?? cells[what], figure(cells[lines])];
      }),
    );
    const drifted = Object.entries(right)
      .filter(([name, lines]) => stated[name] !== lines)
      .map(
        ([name, lines]) =>
          `"${name}": ${format(lines)} lines of code (the ledger says ${stated[name] ?? 'nothing'})`,
      );
    expect(drifted).toEqual([]);
  });

  it(`keeps the root entry at most ${format(ROOT_ENTRY_LIMIT)} lines of code`, () => {
    expect(sum(entryClosure('lib/index.ts'))).toBeLessThanOrEqual(ROOT_ENTRY_LIMIT);
    expect(existsSync(join(ROOT, 'lib', 'index.ts'))).toBe(true);
  });
});
