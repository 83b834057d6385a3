import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * What the library weighs, by the counting rule of the team's code-size tool (kept here, since that tool
 * is not in this repository): a line of code is a line that is neither blank nor comment; lib/'s weight
 * leaves out specs and declaration files; an entry point loads the closure of its static imports of lib/
 * files (`import`/`export ... from`), type-only imports and `import()` left out. Paths are relative to
 * the repository, with `/`.
 */

const ROOT = join(__dirname, '..', '..');

/** The lines of `source` that are neither blank nor comment (`//` lines, `/* ... *\/` blocks). */
export function codeLines(source: string): number {
  let count = 0;
  let inBlock = false;
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    if (inBlock) {
      if (line.includes('*/')) {
        inBlock = false;
        if (line.slice(line.indexOf('*/') + 2).trim()) count++;
      }
      continue;
    }
    if (!line || line.startsWith('//')) continue;
    if (line.startsWith('/*')) {
      if (!line.includes('*/')) inBlock = true;
      else if (line.slice(line.indexOf('*/') + 2).trim()) count++;
      continue;
    }
    count++;
  }
  return count;
}

/** The lines of code of a file of the repository. */
export function codeLinesOf(path: string): number {
  return codeLines(readFileSync(join(ROOT, path), 'utf8'));
}

/** lib/'s source files: `.ts`, no spec, no declaration file. */
export function libSourceFiles(): string[] {
  return readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' })
    .map((file) => `lib/${file.split('\\').join('/')}`)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.endsWith('.d.ts'))
    .sort();
}

/** A glob of repository paths as a regular expression: `**` any folders, `*` within a name. */
export function globPattern(glob: string): RegExp {
  const source = glob
    .split(/(\*\*\/|\*\*|\*)/)
    .map((part) =>
      part === '**/'
        ? '(?:.*/)?'
        : part === '**'
          ? '.*'
          : part === '*'
            ? '[^/]*'
            : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`);
}

const IMPORT = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.[^'"]+)['"]/gm;

/** The lib/ files an entry point (`lib/index.ts`) loads: its static imports' closure, as repository paths. */
export function entryClosure(entry: string): string[] {
  const seen = new Set<string>();
  const stack = [join(ROOT, entry)];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, typeOnly, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (typeOnly) continue;
      const base = resolve(dirname(file), specifier.replace(/\.js$/, ''));
      const target = [`${base}.ts`, join(base, 'index.ts')].find(
        (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
      );
      if (target) stack.push(target);
    }
  }
  return [...seen].map((file) => relative(ROOT, file).split('\\').join('/')).sort();
}
