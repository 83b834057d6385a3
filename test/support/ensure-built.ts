import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Builds the package (`npm run build`: dist/cjs and dist/esm) unless dist/ is newer than everything
 * it is built from, for the specs that test what users install. A fresh `npm ci && npm test` has no
 * dist/ yet; `.ci/run` builds before `npm test`, so there this costs one `stat` per source file.
 * Synchronous: a spec calls it while Jest loads the file, before it registers tests that import
 * the built package.
 */
export function ensureBuilt(): void {
  const built = statSync(join(ROOT, 'dist', 'cjs', 'index.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const inputs = [
    ...sourcesUnder(join(ROOT, 'lib')),
    ...['package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.build.esm.json'].map((file) =>
      join(ROOT, file),
    ),
    ...sourcesUnder(join(ROOT, 'scripts')),
  ];
  if (inputs.every((file) => statSync(file).mtimeMs <= built)) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`npm run build failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** The files the build reads under `dir` (specs are not compiled into the package). */
function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|mjs)$/.test(file) && !/\.spec\.ts$/.test(file))
    .map((file) => join(dir, file));
}
