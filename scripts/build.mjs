// `npm run build`: the published package, from the one source tree in lib/.
//   dist/cjs  CommonJS, for `require` (NestJS 11 apps, Jest in its default mode);
//   dist/esm  ES modules, for `import` (NestJS 12 is ESM-only; any `"type": "module"` app).
// Each folder carries a package.json marker so Node reads its .js files in the right module
// system, whatever the root package.json says. Then every path package.json promises (main, types,
// exports, typesVersions) is checked to exist, so a broken entry fails here, not in a user's app.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addEsmExtensions } from './esm-specifiers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

function compile(project) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`tsc -p ${project} failed (exit code ${code})`)),
    );
  });
}

// The markers also repeat `sideEffects`: bundlers read it from the nearest package.json.
function writeMarker(folder, type) {
  const marker = { type, sideEffects: false };
  writeFileSync(join(root, 'dist', folder, 'package.json'), `${JSON.stringify(marker, null, 2)}\n`);
}

/** Every file path package.json names for consumers, each of which must exist after the build. */
function promisedPaths(pkg) {
  const paths = [pkg.main, pkg.types];
  const walk = (target) => {
    if (typeof target === 'string') paths.push(target);
    else if (target && typeof target === 'object') Object.values(target).forEach(walk);
  };
  walk(pkg.exports);
  walk(pkg.typesVersions);
  return paths.filter((path) => path && !path.includes('*') && path !== './package.json');
}

async function main() {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  await Promise.all([compile('tsconfig.build.json'), compile('tsconfig.build.esm.json')]);
  writeMarker('cjs', 'commonjs');
  writeMarker('esm', 'module');
  const rewritten = addEsmExtensions(join(root, 'dist', 'esm'));

  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const missing = promisedPaths(pkg).filter((path) => !existsSync(join(root, path)));
  if (missing.length > 0) {
    throw new Error(`package.json names files the build did not produce: ${missing.join(', ')}`);
  }
  console.log(`Built dist/cjs and dist/esm (${rewritten} ES files given explicit extensions).`);
}

main().catch((error) => {
  console.error(`build: ${error.message}`);
  process.exit(1);
});
