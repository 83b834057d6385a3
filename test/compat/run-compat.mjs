// `npm run test:compat`: does what users install work in the apps they have?
//
// 1. `npm pack` (its `prepack` runs `npm run build`) and a check of what the tarball holds.
// 2. Fixture apps generated in a temp folder from test/compat/, each installing the tarball from the
//    npm registry like a user would (nothing is cached in the repo):
//      bare        required peers only, NestJS 11 or 12: the CommonJS and ES entries load and a Lambda
//                  batch runs while ioredis, sqs-consumer, @aws-sdk/client-sqs, @aws-sdk/client-dynamodb,
//                  pg, @opentelemetry/api and @nestjs/microservices cannot be resolved (the DynamoDB and
//                  Postgres stores fail with the install line), and the declarations compile;
//      nest11-cjs  a NestJS 11 CommonJS app, type-checked (NodeNext and node10 resolution) and tested
//                  with Jest + ts-jest;
//      nest12-esm  a NestJS 12 ES module app (TypeScript 6, NodeNext; bundler resolution checked too),
//                  compiled by tsc, tested with Jest in ESM mode, its Lambda entry run by Node itself;
//      readme      the docs' own recipes, exactly as printed: an empty app, the `npm install` lines
//                  of the README's Install and docs/testing.md (the package name replaced by the
//                  tarball), the Jest config, tsconfig.json and package.json of docs/testing.md, the
//                  README's `src/` blocks (the Quick start and its test), then `npm test`. Nothing of it
//                  is copied here: it is read from README.md and docs/testing.md (markers
//                  `<!-- recipe: nest11/... -->`, test/support/readme-blocks.js).
//                  Then the Lambda guide's bundling recipe (docs/hosts/lambda.md, `recipe: lambda/...`):
//                  esbuild installed, tsconfig.lambda.json and the build:lambda script written, the SAM
//                  Makefile target run as SAM runs it, and the bundle run alone on sample events
//                  (lambda-bundle.check.cjs); and the same app bundled by esbuild from its sources
//                  (no decorator metadata), which must refuse to start saying why.
//    The Nest apps run on Node 20 with sqs-consumer 14, on Node 22 with sqs-consumer 15, and the
//    NestJS 12 one on Node 24 (22 and 24 from the npm `node` package): one e2e through
//    Test.createTestingModule and SqsTestClient, one Lambda invocation, one real poll of fauxqs with
//    the cell's sqs-consumer.
//    Every cell then runs nest-internals.check.mjs: each Nest internal lib/common/nest-internals.ts relies
//    on, pinned against the cell's Nest and build.
// Each step's output goes to a log file; a failing step prints its tail and the folder is kept.
// COMPAT_CELLS=nest12-esm-node20,bare-node20 runs only those cells; COMPAT_KEEP=1 keeps the folder.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const { readmeBlocks, shellCommands } = createRequire(import.meta.url)('../support/readme-blocks.js');
const work = mkdtempSync(join(tmpdir(), 'nestjs-idempotent-sqs-compat-'));
const logs = join(work, 'logs');
mkdirSync(logs);

/** The matrix: each cell is one installed app run on one Node. */
const CELLS = [
  { name: 'bare-node20', app: 'bare', node: '20' },
  { name: 'bare-node22', app: 'bare', node: '22', installedBy: 'bare-node20' },
  { name: 'bare-node24', app: 'bare', node: '24', installedBy: 'bare-node20' },
  // NestJS 12 is ESM-only: here the CommonJS build require()s it (Node's require(esm)).
  { name: 'bare-nest12-node20', app: 'bare', node: '20', nest: '12' },
  { name: 'nest11-cjs-node20', app: 'nest11-cjs', node: '20', sqsConsumer: '14' },
  { name: 'nest12-esm-node20', app: 'nest12-esm', node: '20', sqsConsumer: '14' },
  { name: 'nest11-cjs-node22', app: 'nest11-cjs', node: '22', sqsConsumer: '15' },
  { name: 'nest12-esm-node22', app: 'nest12-esm', node: '22', sqsConsumer: '15' },
  { name: 'nest12-esm-node24', app: 'nest12-esm', node: '24', sqsConsumer: '15' },
  // The README's recipes as printed: NestJS 11 where most CommonJS apps run, NestJS 12 on the LTS.
  { name: 'readme-nest11-node20', app: 'readme', node: '20', recipe: 'nest11' },
  { name: 'readme-nest12-node24', app: 'readme', node: '24', recipe: 'nest12' },
];

/** Node binaries of the cells, by major: this process's, or one from the npm `node` package. */
const OWN_NODE = process.versions.node.split('.')[0];

const TSC = 'node_modules/typescript/bin/tsc';
const JEST = 'node_modules/jest/bin/jest.js';

/**
 * What each app runs once installed. Type checks depend on the installed packages, not on the Node
 * binary: those that the sqs-consumer major cannot change (node10 and bundler resolution, the bare
 * app's) run in the Node 20 cell only.
 */
const STEPS = {
  bare: (cell, node) => [
    ...(cell.node === '20'
      ? [
          [
            'package types without optional peers (.ts and .mts), skipLibCheck off',
            node,
            [TSC, '-p', 'tsconfig.json'],
          ],
        ]
      : []),
    ['require the CommonJS build, run a Lambda batch', node, ['check.cjs']],
    ['import the ES build, run a Lambda batch', node, ['check.mjs']],
  ],
  'nest11-cjs': (cell, node) => [
    ['package types: NodeNext, CommonJS, skipLibCheck off', node, [TSC, '-p', 'tsconfig.package-types.json']],
    ...(cell.node === '20'
      ? [['package types: node10 resolution (typesVersions)', node, [TSC, '-p', 'tsconfig.node10.json']]]
      : []),
    ['jest (ts-jest, CommonJS)', node, [JEST, '--ci', '--colors=false']],
  ],
  // Only what README.md prints: its `test` script; then the Lambda guide's bundling recipe.
  readme: (cell, node) => [
    [`npm test (${cell.recipe} recipe of README.md)`, node, [npmCli(), 'test']],
    // As SAM runs a BuildMethod: makefile build: the target, with ARTIFACTS_DIR set.
    [
      'the Lambda guide: make build-OrdersFunction (SAM’s build)',
      'make',
      ['build-OrdersFunction', `ARTIFACTS_DIR=${join(work, `${cell.name}-artifacts`)}`],
    ],
    [
      'the Lambda guide: the bundle alone answers a partial batch response',
      node,
      [join(here, LAMBDA_CHECK), join(work, `${cell.name}-artifacts`, 'index.js')],
    ],
    [
      'a bundle of the sources without tsc: refuses to start, saying why',
      join('node_modules', '.bin', 'esbuild'),
      [
        'src/lambda.ts',
        ...lambdaRecipe().esbuildFlags,
        '--outfile=.lambda/no-metadata/index.js',
        '--log-level=error',
      ],
    ],
    [
      'the bundle without decorator metadata names its provider',
      node,
      [join(here, LAMBDA_CHECK), '.lambda/no-metadata/index.js', 'lost-metadata'],
    ],
  ],
  'nest12-esm': (cell, node) => [
    [
      'package types: NodeNext, ES modules, skipLibCheck off',
      node,
      [TSC, '-p', 'tsconfig.package-types.json'],
    ],
    ...(cell.node === '20'
      ? [['package types: bundler resolution', node, [TSC, '-p', 'tsconfig.bundler.json']]]
      : []),
    ['tsc: compile the app and its tests', node, [TSC, '-p', 'tsconfig.json']],
    ['node runs the compiled Lambda entry point (no Jest)', node, ['build/test/invoke-lambda.js']],
    ['jest (ESM mode)', node, ['--experimental-vm-modules', JEST, '--ci', '--colors=false']],
  ],
};

const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

/** Runs one command with its output in a log; on failure prints the tail and throws. */
async function step(label, logName, command, args, options = {}) {
  const since = Date.now();
  const log = join(logs, `${logName}.log`);
  const output = [];
  const stdout = [];
  const code = await new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => {
      output.push(chunk);
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', reject);
    child.on('close', resolve);
  });
  const text = Buffer.concat(output).toString('utf8');
  writeFileSync(log, `$ ${command} ${args.join(' ')}\n(cwd ${options.cwd ?? process.cwd()})\n\n${text}`);
  if (code !== 0) {
    const tail = text.trimEnd().split('\n').slice(-80).join('\n');
    throw new Error(`${label} failed (exit code ${code}); last lines of ${log}:\n${indent(tail)}`);
  }
  console.log(`  ok  ${label} (${seconds(since)})`);
  return Buffer.concat(stdout).toString('utf8');
}

const indent = (text) => text.replace(/^/gm, '      ');

/** npm's own CLI script, so that npm can run under another Node binary (Node 22 for its cells). */
function npmCli() {
  if (process.env.npm_execpath?.endsWith('npm-cli.js')) return process.env.npm_execpath;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      const cli = join(dirname(realpathSync(join(dir, 'npm'))), 'npm-cli.js');
      readFileSync(cli);
      return cli;
    } catch {
      // not in this PATH entry
    }
  }
  throw new Error('cannot find npm-cli.js: run this through `npm run test:compat`');
}

/**
 * npm as users run it: engine mismatches of transitive dependencies are warnings, not errors (Nest
 * 12.5 itself depends on file-type, which declares Node >= 22, and supports Node 20.19). They are
 * listed, so that a cell on an unsupported Node is visible.
 */
async function npm(node, args, cwd, label, logName) {
  // --prefer-offline: reuse npm's own cache (outside the repo) when it has a version in range.
  const flags = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=warn'];
  await step(label, logName, node, [npmCli(), ...args, ...flags], { cwd });
  const log = readFileSync(join(logs, `${logName}.log`), 'utf8');
  const engines = [
    ...log.matchAll(
      /EBADENGINE Unsupported engine \{[^}]*package: '([^']+)'[^}]*required: \{ node: '([^']+)'/gs,
    ),
  ];
  for (const [, name, range] of engines) console.log(`      npm warned: ${name} declares node ${range}`);
}

/** `npm pack` (prepack builds), then the tarball's file list: what users get and nothing else. */
async function pack() {
  console.log('package');
  const out = await step(
    'npm pack (builds first)',
    'pack',
    process.execPath,
    [npmCli(), 'pack', '--json', '--pack-destination', work],
    {
      cwd: repo,
    },
  );
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  const files = info.files.map((file) => file.path);
  // Compiled modules and declarations, the two module-type markers, and the docs (the guides and their
  // picture): no tests, no fixtures, no source maps (they would point at sources the package does not
  // ship), no API reference built in a clone (docs/api/).
  const unexpected = files.filter(
    (path) =>
      /\.spec\.|\.map$/.test(path) ||
      path.startsWith('docs/api/') ||
      (!/^dist\/(cjs|esm)\/.+\.(js|d\.ts)$/.test(path) &&
        !/^dist\/(cjs|esm)\/package\.json$/.test(path) &&
        !/^docs\/.+\.(md|png)$/.test(path) &&
        !['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(path)),
  );
  const required = [
    'dist/cjs/index.js',
    'dist/esm/index.js',
    'dist/cjs/testing/index.d.ts',
    'dist/esm/testing/index.d.ts',
    'dist/cjs/microservices/index.js',
    'dist/esm/microservices/index.d.ts',
    'dist/cjs/stores/redis/index.js',
    'dist/esm/stores/redis/index.d.ts',
    'dist/cjs/stores/dynamodb/index.js',
    'dist/esm/stores/dynamodb/index.d.ts',
    'dist/cjs/stores/postgres/index.js',
    'dist/esm/stores/postgres/index.d.ts',
    'dist/cjs/center/index.js',
    'dist/esm/center/index.d.ts',
    'dist/cjs/stores/index.js',
    'dist/esm/stores/index.d.ts',
    'dist/cjs/types.d.ts',
    'dist/esm/types.d.ts',
    'CHANGELOG.md',
    'docs/README.md',
    'docs/hosts/lambda.md',
  ];
  const missing = required.filter((path) => !files.includes(path));
  if (unexpected.length > 0 || missing.length > 0) {
    throw new Error(
      `the tarball holds what users should not get, or lacks what they need:\n` +
        (unexpected.length ? `      unexpected: ${unexpected.join(', ')}\n` : '') +
        (missing.length ? `      missing: ${missing.join(', ')}` : ''),
    );
  }
  console.log(`  ok  ${info.filename}: ${files.length} files, ${(info.size / 1024).toFixed(0)} kB packed`);
  return join(work, info.filename);
}

/** A Node binary of `major` from the npm registry (the `node` package). */
async function installNode(major) {
  const dir = join(work, `node${major}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
  await npm(
    process.execPath,
    ['install', `node@${major}`],
    dir,
    `install node@${major} from npm`,
    `node${major}-install`,
  );
  const binary = join(dir, 'node_modules', 'node', 'bin', 'node');
  const version = (await step(`node@${major} runs`, `node${major}-version`, binary, ['--version'])).trim();
  if (!version.startsWith(`v${major}.`)) throw new Error(`node@${major} reports ${version}`);
  return binary;
}

/**
 * The steps of a recipe (`nest11`, `nest12`), from the blocks marked `<!-- recipe: NAME/... -->` in
 * README.md (the install lines) and docs/testing.md (the test runner's set-up): the npm install
 * commands, the files to write, and the `src/` blocks of the README's Quick start.
 */
function readmeRecipe(name) {
  const readme = readmeBlocks(readFileSync(join(repo, 'README.md'), 'utf8'));
  const testing = readmeBlocks(readFileSync(join(repo, 'docs', 'testing.md'), 'utf8'));
  const steps = [...readme, ...testing].flatMap((block) =>
    block.markers.recipes
      .filter((recipe) => recipe.startsWith(`${name}/`))
      .map((recipe) => ({ step: recipe.slice(name.length + 1), block })),
  );
  const installs = steps
    .filter(({ step }) => step === 'install')
    .flatMap(({ block }) => shellCommands(block.code));
  const files = steps.filter(({ step }) => step !== 'install');
  const sources = readme.filter((block) => block.lang === 'ts' && block.path?.startsWith('src/'));
  const wanted = ['jest.config.js', 'tsconfig.json', 'package.json'];
  const missing = wanted.filter((file) => !files.some(({ step }) => step === file));
  if (installs.length === 0 || missing.length > 0 || sources.length === 0) {
    throw new Error(
      `README.md and docs/testing.md have no complete ${name} recipe: install commands ${installs.length}, ` +
        `missing files ${missing.join(', ') || 'none'}, src/ blocks ${sources.length}`,
    );
  }
  for (const command of installs) {
    if (!/^npm install\s/.test(command))
      throw new Error(`README.md ${name}/install: not an npm install: ${command}`);
  }
  return { installs, files, sources };
}

const LAMBDA_CHECK = 'lambda-bundle.check.cjs';

/**
 * The Lambda guide's bundling recipe (docs/hosts/lambda.md): its install commands, the files it
 * prints (tsconfig.lambda.json, Makefile; package.json merged into the app's), and the esbuild flags
 * of its build:lambda script.
 */
function lambdaRecipe() {
  const blocks = readmeBlocks(readFileSync(join(repo, 'docs', 'hosts', 'lambda.md'), 'utf8'));
  const steps = blocks.flatMap((block) =>
    block.markers.recipes
      .filter((recipe) => recipe.startsWith('lambda/'))
      .map((recipe) => ({ step: recipe.slice('lambda/'.length), block })),
  );
  const block = (name) => {
    const found = steps.find(({ step }) => step === name);
    if (!found) throw new Error(`docs/hosts/lambda.md has no block marked recipe: lambda/${name}`);
    return found.block;
  };
  const installs = shellCommands(block('install').code);
  const script = JSON.parse(block('package.json').code).scripts['build:lambda'];
  const esbuild = script
    .split('&&')
    .map((part) => part.trim().split(/\s+/))
    .find((words) => words[0] === 'esbuild');
  const esbuildFlags = esbuild
    .slice(1)
    .filter((word) => word.startsWith('--') && !word.startsWith('--outfile='));
  const files = ['tsconfig.lambda.json', 'Makefile', 'template.yaml'].map((name) => ({
    name,
    code: block(name).code,
  }));
  return { installs, packageJson: JSON.parse(block('package.json').code), files, esbuildFlags };
}

/** An empty app, made only of what the README prints for `cell.recipe`, installed as it says. */
async function installReadmeApp(cell, tarball, node) {
  const dir = join(work, cell.name);
  mkdirSync(dir);
  const { installs, files, sources } = readmeRecipe(cell.recipe);
  const pkg = { name: `readme-${cell.recipe}`, version: '0.0.0', private: true };
  for (const { step, block } of files) {
    // package.json: what the README prints is merged into a bare one (name, version); the rest as printed.
    if (step === 'package.json') Object.assign(pkg, JSON.parse(block.code));
    else writeFileSync(join(dir, step), `${block.code}\n`);
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  for (const block of sources) {
    mkdirSync(dirname(join(dir, block.path)), { recursive: true });
    writeFileSync(join(dir, block.path), `${block.code}\n`);
  }
  // The Lambda guide's recipe: its files, its script merged into package.json, its installs below.
  const lambda = lambdaRecipe();
  for (const { name, code } of lambda.files) writeFileSync(join(dir, name), `${code}\n`);
  pkg.scripts = { ...pkg.scripts, ...lambda.packageJson.scripts };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  for (const [index, command] of [...installs, ...lambda.installs].entries()) {
    // The package comes from the tarball instead of the registry; every other word as printed.
    const args = command
      .split(/\s+/)
      .slice(1)
      .map((word) => (word === 'nestjs-idempotent-sqs' ? tarball : word));
    await npm(
      node,
      args,
      dir,
      `${cell.name}: ${command} (Node ${cell.node})`,
      `${cell.name}-install-${index}`,
    );
  }
  return dir;
}

/** Generates a cell's app folder from the fixtures and installs it with the cell's Node. */
async function installApp(cell, tarball, node) {
  if (cell.app === 'readme') return installReadmeApp(cell, tarball, node);
  const dir = join(work, cell.name);
  cpSync(join(here, cell.app), dir, { recursive: true });
  const typesCheck = join(here, 'app', 'test', 'package-types.check.ts');
  if (cell.app !== 'bare') cpSync(join(here, 'app'), dir, { recursive: true });
  else for (const ext of ['ts', 'mts']) cpSync(typesCheck, join(dir, 'types', `package-types.check.${ext}`));
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  pkg.dependencies['nestjs-idempotent-sqs'] = `file:${tarball}`;
  if (cell.sqsConsumer) pkg.dependencies['sqs-consumer'] = `^${cell.sqsConsumer}.0.0`;
  if (cell.nest) {
    for (const name of ['@nestjs/common', '@nestjs/core']) pkg.dependencies[name] = `^${cell.nest}.0.0`;
  }
  writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
  await npm(node, ['install'], dir, `${cell.name}: npm install (Node ${cell.node})`, `${cell.name}-install`);
  return dir;
}

async function runCell(cell, dir, node) {
  const env = {
    ...process.env,
    COMPAT_CELL: cell.name,
    COMPAT_NODE: cell.node,
    COMPAT_SQS_CONSUMER: cell.sqsConsumer ?? '',
    COMPAT_MODULE: cell.app === 'nest12-esm' ? 'esm' : 'cjs',
    // The fixtures must not see the repo's test environment.
    SQS_ENDPOINT: '',
    REDIS_URL: '',
    NODE_OPTIONS: '',
    // The Lambda guide's Makefile runs `npm ci`: from npm's cache, as the installs before it.
    npm_config_prefer_offline: 'true',
    // `node` in an npm script is the cell's (npm adds node_modules/.bin to PATH, not its own Node).
    PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
  };
  // The README's Quick start polls when ORDERS_QUEUE_URL is set: its test runs without it.
  delete env.ORDERS_QUEUE_URL;
  // SAM gives its Makefile build an ARTIFACTS_DIR that exists (the Lambda guide's recipe).
  if (cell.app === 'readme') mkdirSync(join(work, `${cell.name}-artifacts`), { recursive: true });
  for (const [label, command, args] of STEPS[cell.app](cell, node)) {
    await step(label, `${cell.name}-${label.replace(/\W+/g, '-')}`, command, args, { cwd: dir, env });
  }
  // Every cell, whatever its app: the Nest internals lib/common/nest-internals.ts relies on, pinned against
  // the Nest (11 or 12) and the build (CommonJS or ES) of the cell.
  cpSync(join(here, NEST_INTERNALS_CHECK), join(dir, NEST_INTERNALS_CHECK));
  const out = await step(
    'Nest internals of lib/common/nest-internals.ts',
    `${cell.name}-nest-internals`,
    node,
    [NEST_INTERNALS_CHECK],
    { cwd: dir, env },
  );
  console.log(`      ${out.trimEnd().split('\n').at(-1)}`);
}

const NEST_INTERNALS_CHECK = 'nest-internals.check.mjs';

/** Runs at most `count` of the given tasks at once. */
function limiter(count) {
  let running = 0;
  const waiting = [];
  const next = () => {
    if (running >= count || waiting.length === 0) return;
    running++;
    const { task, resolve, reject } = waiting.shift();
    task()
      .then(resolve, reject)
      .finally(() => {
        running--;
        next();
      });
  };
  return (task) =>
    new Promise((resolve, reject) => {
      waiting.push({ task, resolve, reject });
      next();
    });
}

async function main() {
  const only = process.env.COMPAT_CELLS?.split(',').map((name) => name.trim());
  const cells = CELLS.filter((cell) => !only || only.includes(cell.name));
  console.log(`test:compat in ${work}`);
  const tarball = await pack();

  // Installs wait on the network more than on the 2 cores: two at a time, all before the first run.
  console.log('install');
  const limit = limiter(2);
  const nodes = new Map();
  for (const major of new Set(cells.map((cell) => cell.node))) {
    if (major !== OWN_NODE)
      nodes.set(
        major,
        limit(() => installNode(major)),
      );
  }
  const nodeOf = async (cell) => (cell.node === OWN_NODE ? process.execPath : nodes.get(cell.node));
  const installs = new Map();
  for (const cell of cells) {
    const shared = cell.installedBy && installs.get(cell.installedBy);
    const install = shared ?? nodeOf(cell).then((node) => limit(() => installApp(cell, tarball, node)));
    install.catch(() => undefined); // each is awaited by its cell below
    installs.set(cell.name, install);
  }
  await Promise.allSettled(installs.values());

  // A finished app's folder is deleted while the next cell runs (unless a later cell reuses it).
  const removals = [];
  const keep = Boolean(process.env.COMPAT_KEEP);
  const release = (cell, index) => {
    const reused = cells.slice(index + 1).some((later) => later.installedBy === cell.name);
    if (!keep && !reused) removals.push(rm(join(work, cell.name), { recursive: true, force: true }));
  };

  const results = [];
  for (const [index, cell] of cells.entries()) {
    const since = Date.now();
    console.log(`${cell.name}${cell.sqsConsumer ? ` (sqs-consumer ${cell.sqsConsumer})` : ''}`);
    try {
      const dir = await installs.get(cell.name);
      await runCell(cell, dir, await nodeOf(cell));
      results.push({ cell, ok: true, time: seconds(since) });
      release(cell, index);
    } catch (error) {
      console.log(`  FAILED  ${error.message}`);
      results.push({ cell, ok: false, time: seconds(since) });
    }
  }

  const failed = results.filter((result) => !result.ok);
  console.log(`\ncompat matrix (${seconds(started)} in all, installs included):`);
  for (const { cell, ok, time } of results) {
    console.log(`  ${ok ? 'pass' : 'FAIL'}  ${cell.name.padEnd(20)} ${time}`);
  }
  await Promise.all(removals);
  if (failed.length > 0 || keep) console.log(`apps and logs kept in ${work}`);
  else await rm(work, { recursive: true, force: true });
  console.log(`compat: ${results.length - failed.length} passed, ${failed.length} failed`);
  process.exitCode = failed.length > 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(`test:compat: ${error.message}\napps and logs kept in ${work}`);
  process.exitCode = 1;
});
