// Mutation testing of the Redis store's Lua scripts (lib/stores/redis/redis-idempotency.scripts.ts), which
// StrykerJS cannot mutate: each mutation of the list below (a comparison, a condition, a TTL or token check, a
// returned state) is applied to a copy of the scripts' module, and the conformance kit and the Redis store's
// specs run against it, the store importing the copy (Jest's moduleNameMapper): the sources are never edited.
// A mutation is caught when a test fails; one no test can catch is listed with the reason (`equivalent`).
//
//   npm run test:mutation:lua               # every mutation, then reports/mutation/lua.json and summary.md
//   npm run test:mutation:lua -- --list     # the mutations, without running anything
//   npm run test:mutation:lua -- COMPLETE   # the mutations of the scripts named (a quick check)
//   npm run test:mutation:lua -- 2 4 --update  # mutations 2 and 4 again (after a new test), kept in lua.json
//
// One Jest run per mutation, one worker, stopping at the first failing spec file (`--bail`): 34 s a
// mutation on average (36 min for the 64) on a 2-core machine shared at a load average of 15 to 25.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SCRIPTS = join(root, 'lib', 'stores', 'redis', 'redis-idempotency.scripts.ts');
const work = join(root, '.stryker-tmp', 'lua');
const reports = join(root, 'reports', 'mutation');

/** The specs each mutation runs: the kit on the store (twice: plain and compact keys), then the store's own. */
export const SPECS = [
  'lib/stores/redis/redis-idempotency.store.spec.ts',
  'lib/stores/redis/redis-idempotency.store.replies.spec.ts',
  'test/redis-store.e2e-spec.ts',
];

/** Every test but the kit's second run (compactKeys): the scripts it sends are the first run's. */
const SKIPPED_TESTS = '^(?!RedisIdempotencyStore \\(compactKeys\\))';

// `in`: the script (its `export const NAME = luaScript(...)`) or `notOwnFingerprintedClaim`, the condition
// COMPLETE, FORGET, EXTEND and COMPLETE_MANY share; `from` must occur once there (else `nth`, 0-based).
// Tokens and TTLs as the store sends them: ARGV[1] the token (never "1", never with a space: checkToken
// refuses them at the claim), ARGV[2] the TTL in milliseconds, "0" for none.
export const MUTATIONS = [
  // ACQUIRE: the claim before Redis 7.0 (SET NX GET as a script).
  {
    in: 'ACQUIRE',
    what: 'a lease taken without its TTL branch',
    from: "if ARGV[2] == '0' then",
    to: "if ARGV[2] ~= '0' then",
  },
  { in: 'ACQUIRE', what: 'no NX (claim without a TTL)', from: "ARGV[1], 'NX')", to: 'ARGV[1])' },
  { in: 'ACQUIRE', what: 'no NX (claim with a lease)', from: "'NX', 'PX', ARGV[2])", to: "'PX', ARGV[2])" },
  {
    in: 'ACQUIRE',
    what: 'a lease that never expires',
    from: "ARGV[1], 'NX', 'PX', ARGV[2])",
    to: "ARGV[1], 'NX')",
  },
  {
    in: 'ACQUIRE',
    what: 'acquired ↔ refused',
    from: 'if claimed then return false end',
    to: 'if not claimed then return false end',
  },
  {
    in: 'ACQUIRE',
    what: "the holder's value not returned",
    from: "return redis.call('GET', KEYS[1])",
    to: 'return false',
  },

  // The shared condition: the held value is not the caller's own fingerprinted claim.
  {
    in: 'notOwnFingerprintedClaim',
    what: 'a bare completed marker not recognised',
    from: "held == '${COMPLETED_VALUE}' or ",
    to: '',
    equivalent:
      'A held "1" cannot start with "<token> " (a token is never empty), so the last clause is true for it anyway.',
  },
  {
    in: 'notOwnFingerprintedClaim',
    what: 'a completed value with a fingerprint not recognised',
    from: "string.sub(held, 1, 2) == '${COMPLETED_PREFIX}' ",
    to: 'false ',
    equivalent:
      'A held "1 <fingerprint>" starts with "<token> " only for the token "1", which the store never claims with (checkToken): the last clause is true for it anyway.',
  },
  {
    in: 'notOwnFingerprintedClaim',
    what: 'own ↔ other (prefix comparison)',
    from: '~= ${token} ..',
    to: '== ${token} ..',
  },
  {
    in: 'notOwnFingerprintedClaim',
    what: "the token's prefix compared without its space",
    from: '#${token} + 1',
    to: '#${token}',
  },
  {
    in: 'notOwnFingerprintedClaim',
    what: 'the space after the token not required',
    from: "${token} .. ' '",
    to: '${token}',
  },

  // COMPLETE: completes the caller's claim (or an absent key), keeps the fingerprint.
  { in: 'COMPLETE', what: 'own ↔ other (token)', from: 'held ~= ARGV[1] or', to: 'held == ARGV[1] or' },
  {
    in: 'COMPLETE',
    what: 'a completed key not checked apart',
    from: " or held == '${COMPLETED_VALUE}')",
    to: ')',
    equivalent:
      'Only a caller completing with the token "1" sees a difference, and no claim holds "1" (checkToken refuses it): a completion with it completes nothing it owns either way.',
  },
  { in: 'COMPLETE', what: 'an absent key not completed', from: 'if held and (', to: 'if (' },
  {
    in: 'COMPLETE',
    what: "another's claim reported completed",
    from: 'then return 0 end',
    to: 'then return 1 end',
  },
  {
    in: 'COMPLETE',
    what: 'the fingerprint dropped at completion',
    from: 'value = value .. string.sub(held, #ARGV[1] + 1)',
    to: 'value = value',
  },
  { in: 'COMPLETE', what: "the fingerprint's space dropped", from: '#ARGV[1] + 1)', to: '#ARGV[1] + 2)' },
  {
    in: 'COMPLETE',
    what: 'the TTL branches swapped',
    from: "if ARGV[2] == '0' then",
    to: "if ARGV[2] ~= '0' then",
  },
  { in: 'COMPLETE', what: 'a completion without its TTL', from: "value, 'PX', ARGV[2])", to: 'value)' },
  {
    in: 'COMPLETE',
    what: "a completion kept forever keeps the lease's expiry",
    from: "redis.call('SET', KEYS[1], value)\n",
    to: "redis.call('SET', KEYS[1], value, 'KEEPTTL')\n",
  },
  { in: 'COMPLETE', what: 'completed reported lost', from: 'return 1\n', to: 'return 0\n' },

  // FORGET: deletes only the caller's claim.
  {
    in: 'FORGET',
    what: 'an absent key reported lost',
    from: 'if not held then return 1 end',
    to: 'if not held then return 0 end',
  },
  { in: 'FORGET', what: 'own ↔ other (token)', from: 'if held ~= ARGV[1] or', to: 'if held == ARGV[1] or' },
  {
    in: 'FORGET',
    what: 'a completed key not checked apart',
    from: " or held == '${COMPLETED_VALUE}' then",
    to: ' then',
    equivalent: 'As in COMPLETE: only a release with the token "1" could tell, and no claim holds "1".',
  },
  {
    in: 'FORGET',
    what: "another's claim reported released",
    from: 'then return 0 end',
    to: 'then return 1 end',
  },
  {
    in: 'FORGET',
    what: 'the claim not deleted',
    from: "redis.call('DEL', KEYS[1])",
    to: "redis.call('GET', KEYS[1])",
  },
  {
    in: 'FORGET',
    what: 'released reported lost',
    from: "redis.call('DEL', KEYS[1])\nreturn 1",
    to: "redis.call('DEL', KEYS[1])\nreturn 0",
  },

  // EXTEND: renews only the caller's live claim.
  { in: 'EXTEND', what: 'own ↔ other (token)', from: 'if held ~= ARGV[1] or', to: 'if held == ARGV[1] or' },
  { in: 'EXTEND', what: 'an absent key not refused', from: 'if not held or ', to: 'if false or ' },
  {
    in: 'EXTEND',
    what: 'a completed key not checked apart',
    from: " or held == '${COMPLETED_VALUE}' then",
    to: ' then',
    equivalent: 'As in COMPLETE: only a renewal with the token "1" could tell, and no claim holds "1".',
  },
  {
    in: 'EXTEND',
    what: "another's claim reported extended",
    from: 'then return 0 end',
    to: 'then return 1 end',
  },
  {
    in: 'EXTEND',
    what: 'the TTL branches swapped',
    from: "if ARGV[2] == '0' then",
    to: "if ARGV[2] ~= '0' then",
  },
  {
    in: 'EXTEND',
    what: 'a renewal without a TTL keeps the old one',
    from: "redis.call('PERSIST', KEYS[1])",
    to: "redis.call('PTTL', KEYS[1])",
  },
  {
    in: 'EXTEND',
    what: 'the lease not renewed',
    from: "redis.call('PEXPIRE', KEYS[1], ARGV[2])",
    to: "redis.call('PTTL', KEYS[1])",
  },
  { in: 'EXTEND', what: 'extended reported lost', from: 'end\nreturn 1', to: 'end\nreturn 0' },

  // INSPECT: what a key holds, read-only.
  {
    in: 'INSPECT',
    what: 'an absent key reported in progress',
    from: 'if not held then return false end',
    to: 'if not held then return { 0, -1 } end',
  },
  {
    in: 'INSPECT',
    what: 'a bare completed marker not recognised',
    from: "held == '${COMPLETED_VALUE}' or ",
    to: '',
  },
  {
    in: 'INSPECT',
    what: 'a completed value with a fingerprint not recognised',
    from: " or string.sub(held, 1, 2) == '${COMPLETED_PREFIX}'",
    to: '',
  },
  {
    in: 'INSPECT',
    what: 'completed ↔ in progress',
    from: 'then completed = 1 end',
    to: 'then completed = 0 end',
  },
  { in: 'INSPECT', what: 'the remaining TTL not read', from: "redis.call('PTTL', KEYS[1])", to: '-1' },

  // ACQUIRE_MANY: the claims of a batch.
  {
    in: 'ACQUIRE_MANY',
    what: 'a held key claimed',
    from: '  if not held then\n    local claimed',
    to: '  if held then\n    local claimed',
  },
  {
    in: 'ACQUIRE_MANY',
    what: 'the TTL branches swapped',
    from: "if ARGV[2 * i] == '0' then",
    to: "if ARGV[2 * i] ~= '0' then",
  },
  {
    in: 'ACQUIRE_MANY',
    what: 'no NX (claim without a TTL)',
    from: "ARGV[2 * i - 1], 'NX')",
    to: 'ARGV[2 * i - 1])',
  },
  {
    in: 'ACQUIRE_MANY',
    what: 'no NX (claim with a lease)',
    from: "'NX', 'PX', ARGV[2 * i])",
    to: "'PX', ARGV[2 * i])",
  },
  {
    in: 'ACQUIRE_MANY',
    what: 'a lease that never expires',
    from: "ARGV[2 * i - 1], 'NX', 'PX', ARGV[2 * i])",
    to: "ARGV[2 * i - 1], 'NX')",
  },
  {
    in: 'ACQUIRE_MANY',
    what: 'a key claimed earlier in the call not read again',
    from: "if not claimed then held = redis.call('GET', KEYS[i]) end",
    to: '',
  },
  { in: 'ACQUIRE_MANY', what: 'acquired answered in progress', from: 'answers[i] = 0', to: 'answers[i] = 2' },
  {
    in: 'ACQUIRE_MANY',
    what: 'completed answered in progress',
    from: 'answers[i] = 1',
    to: 'answers[i] = 2',
  },
  { in: 'ACQUIRE_MANY', what: 'in progress answered acquired', from: 'answers[i] = 2', to: 'answers[i] = 0' },
  {
    in: 'ACQUIRE_MANY',
    what: 'a bare completed marker not recognised',
    from: "held == '${COMPLETED_VALUE}' or ",
    to: '',
  },
  {
    in: 'ACQUIRE_MANY',
    what: 'a completed value with a fingerprint not recognised',
    from: " or string.sub(held, 1, 2) == '${COMPLETED_PREFIX}'",
    to: '',
  },
  {
    in: 'ACQUIRE_MANY',
    what: 'the first key skipped',
    from: 'for i = 1, #KEYS do',
    to: 'for i = 2, #KEYS do',
  },

  // COMPLETE_MANY: the completions of a batch.
  {
    in: 'COMPLETE_MANY',
    what: 'a key this call wrote not read again',
    from: 'if not held or written[key] then',
    to: 'if not held then',
  },
  {
    in: 'COMPLETE_MANY',
    what: 'a key MGET found empty not read again',
    from: 'if not held or written[key] then',
    to: 'if written[key] then',
  },
  { in: 'COMPLETE_MANY', what: 'own ↔ other (token)', from: 'held ~= token or', to: 'held == token or' },
  {
    in: 'COMPLETE_MANY',
    what: 'a completed key not checked apart',
    from: " or held == '${COMPLETED_VALUE}')",
    to: ')',
    equivalent: 'As in COMPLETE: only a completion with the token "1" could tell, and no claim holds "1".',
  },
  { in: 'COMPLETE_MANY', what: "another's claim completed", from: 'lost = true', to: 'lost = false' },
  {
    in: 'COMPLETE_MANY',
    what: 'the fingerprint dropped at completion',
    from: 'value = value .. string.sub(held, #token + 1)',
    to: 'value = value',
  },
  { in: 'COMPLETE_MANY', what: 'lost reported completed', from: 'answers[i] = 0', to: 'answers[i] = 1' },
  {
    in: 'COMPLETE_MANY',
    what: 'the TTL branches swapped',
    from: "if px == '0' then",
    to: "if px ~= '0' then",
  },
  { in: 'COMPLETE_MANY', what: 'a completion without its TTL', from: "value, 'PX', px)", to: 'value)' },
  { in: 'COMPLETE_MANY', what: 'completed reported lost', from: 'answers[i] = 1', to: 'answers[i] = 0' },
  {
    in: 'COMPLETE_MANY',
    what: "a key's token and TTL swapped",
    from: 'ARGV[2 * i - 1], ARGV[2 * i]',
    to: 'ARGV[2 * i], ARGV[2 * i - 1]',
  },
  {
    in: 'COMPLETE_MANY',
    what: 'the first key skipped',
    from: 'for i = 1, #KEYS do',
    to: 'for i = 2, #KEYS do',
  },
];

/** The text of `name` in the scripts' module: its template literal, or the shared condition's function. */
function regionOf(source, name) {
  const start =
    name === 'notOwnFingerprintedClaim'
      ? source.indexOf('const notOwnFingerprintedClaim')
      : source.indexOf(`export const ${name} = luaScript(\``);
  if (start < 0) throw new Error(`lua-mutation: ${name} is not in ${SCRIPTS} any more: update the list`);
  const end =
    name === 'notOwnFingerprintedClaim' ? source.indexOf(';\n', start) : source.indexOf('`);', start);
  return { start, end };
}

/** The module with `mutation` applied; refuses a mutation whose text is not found once (the code moved). */
export function mutate(source, mutation) {
  const { start, end } = regionOf(source, mutation.in);
  const region = source.slice(start, end);
  const found = [];
  for (let at = region.indexOf(mutation.from); at >= 0; at = region.indexOf(mutation.from, at + 1))
    found.push(at);
  const nth = mutation.nth ?? 0;
  if (found.length === 0 || (mutation.nth === undefined && found.length > 1)) {
    throw new Error(
      `lua-mutation: ${mutation.in} holds ${JSON.stringify(mutation.from)} ${found.length} times (once expected): update the list`,
    );
  }
  const at = start + found[nth];
  return source.slice(0, at) + mutation.to + source.slice(at + mutation.from.length);
}

/** Runs the specs with the store importing `module`; answers the first failing test, or null when all pass. */
function runSpecs(module, index) {
  const config = join(work, 'jest.config.js');
  writeFileSync(
    config,
    `const base = require(${JSON.stringify(join(root, 'jest.config.js'))});\n` +
      `module.exports = { ...base, rootDir: ${JSON.stringify(root)}, ` +
      `moduleNameMapper: { '^\\\\./redis-idempotency\\\\.scripts$': ${JSON.stringify(module)} } };\n`,
  );
  const results = join(work, `results-${index}.json`);
  const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
  const run = spawnSync(
    process.execPath,
    [
      jest,
      '-c',
      config,
      '--ci',
      '--silent',
      '--bail',
      '--maxWorkers=1',
      '--json',
      `--outputFile=${results}`,
      // The kit's second run on the store (compactKeys) sends the same scripts, under other key names.
      `--testNamePattern=${SKIPPED_TESTS}`,
      ...SPECS,
    ],
    { cwd: root, encoding: 'utf8', env: process.env },
  );
  let report;
  try {
    report = JSON.parse(readFileSync(results, 'utf8'));
  } catch {
    // --bail ends Jest before it writes its results: the failure is read from its output.
    const file = /^FAIL (\S+)/m.exec(run.stderr)?.[1];
    const test = /^\s+● (.+)$/m.exec(run.stderr)?.[1];
    if (run.status !== 0 && file) return `${file}: ${test ?? 'the spec file failed'}`;
    throw new Error(`lua-mutation: Jest wrote no results (exit ${run.status}):\n${run.stderr.slice(-4000)}`);
  }
  for (const file of report.testResults) {
    const failed = file.assertionResults.find((test) => test.status === 'failed');
    if (failed) return `${file.name.slice(root.length)}: ${failed.fullName}`;
    if (file.status === 'failed')
      return `${file.name.slice(root.length)}: ${file.message.split('\n').find(Boolean)}`;
  }
  return null;
}

function main() {
  const args = process.argv.slice(2);
  const chosen = args.filter((arg) => !arg.startsWith('--'));
  const list = MUTATIONS.map((mutation, index) => ({ ...mutation, id: index + 1 })).filter(
    (mutation) => chosen.length === 0 || chosen.includes(mutation.in) || chosen.includes(String(mutation.id)),
  );
  const source = readFileSync(SCRIPTS, 'utf8');
  // Checked before anything runs: every mutation still finds its text.
  for (const mutation of list) mutate(source, mutation);
  if (args.includes('--list')) {
    for (const m of list)
      console.log(`${m.id}. ${m.in}: ${m.what}  ${JSON.stringify(m.from)} → ${JSON.stringify(m.to)}`);
    return;
  }
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  // The copy sits outside lib/: its one relative import is made absolute.
  const relocate = (text) =>
    text.replace(
      "from '../idempotency-store.interface'",
      `from ${JSON.stringify(join(root, 'lib', 'stores', 'idempotency-store.interface'))}`,
    );
  const module = join(work, 'redis-idempotency.scripts.ts');
  const started = performance.now();

  writeFileSync(module, relocate(source));
  const baseline = runSpecs(module, 0);
  if (baseline) throw new Error(`lua-mutation: the specs fail without any mutation: ${baseline}`);

  const results = [];
  for (const mutation of list) {
    writeFileSync(module, relocate(mutate(source, mutation)));
    const began = performance.now();
    const caughtBy = runSpecs(module, mutation.id);
    const result = {
      id: mutation.id,
      script: mutation.in,
      what: mutation.what,
      from: mutation.from,
      to: mutation.to,
      status: caughtBy ? 'caught' : mutation.equivalent ? 'equivalent' : 'survived',
      ...(caughtBy ? { caughtBy } : {}),
      ...(!caughtBy && mutation.equivalent ? { why: mutation.equivalent } : {}),
      seconds: Math.round((performance.now() - began) / 100) / 10,
    };
    results.push(result);
    console.log(
      `${result.id}. ${result.script}: ${result.what}: ${result.status}${caughtBy ? ` by ${caughtBy}` : ''}`,
    );
  }
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
  // --update: the mutations chosen run again (after a new test), their results replacing those of the last full run.
  const update = chosen.length > 0 && args.includes('--update');
  const last = update ? JSON.parse(readFileSync(join(reports, 'lua.json'), 'utf8')) : undefined;
  if (update) {
    const rerun = new Map(results.map((result) => [result.id, result]));
    results.splice(0, results.length, ...last.results.map((result) => rerun.get(result.id) ?? result));
  }
  const count = (status) => results.filter((result) => result.status === status).length;
  const summary = {
    // An update keeps the full run's commit and time, and says which mutations ran again, when and where.
    commit: last?.commit ?? commit,
    minutes: last?.minutes ?? Math.round((performance.now() - started) / 6000) / 10,
    measuredAt: last?.measuredAt ?? new Date().toISOString(),
    specs: SPECS,
    mutations: results.length,
    caught: count('caught'),
    equivalent: count('equivalent'),
    survived: count('survived'),
    ...(update
      ? {
          rerun: {
            mutations: [...chosen],
            commit,
            measuredAt: new Date().toISOString(),
            earlier: last.rerun,
          },
        }
      : {}),
    results,
  };
  if (chosen.length === 0 || update) {
    mkdirSync(reports, { recursive: true });
    writeFileSync(join(reports, 'lua.json'), `${JSON.stringify(summary, null, 2)}\n`);
    // summary.md carries the Lua run's line too.
    execFileSync(process.execPath, [join(root, 'scripts', 'mutation.mjs'), '--summary'], {
      cwd: root,
      stdio: 'inherit',
    });
  }
  rmSync(work, { recursive: true, force: true });
  console.log(
    `Lua mutations: ${summary.caught} caught, ${summary.equivalent} equivalent, ${summary.survived} survived of ${summary.mutations} in ${summary.minutes} min`,
  );
  if (summary.survived > 0) process.exitCode = 1;
}

main();
