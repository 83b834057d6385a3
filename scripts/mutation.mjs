// Mutation testing of the library's core with StrykerJS, in groups small enough for a 2-core machine:
// a group mutates a few files and runs only the specs that exercise them (and, per mutant, only the
// tests that covered it). The SQS emulator and the private redis-server the specs need are started
// once here, as Jest's global setup does for `npm test`, and shared by every group.
//
//   npm run test:mutation                 # every group, one after the other
//   npm run test:mutation -- batch stores # the named groups only
//   npm run test:mutation -- --list       # the groups, what they mutate and which specs they run
//   npm run test:mutation -- --summary    # rewrite summary.md from the groups measured so far
//
// Writes reports/mutation/<group>/ (Stryker's HTML and JSON, not committed), reports/mutation/<group>.json
// (the group's figures and its surviving mutants, committed) and reports/mutation/summary.md (the score per file of
// every group measured so far). Surviving mutants judged equivalent are listed in test/mutation/EQUIVALENT.md.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import baseOptions from '../stryker.config.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const reports = join(root, 'reports', 'mutation');

/** What each group mutates, and the specs that exercise it. */
export const GROUPS = {
  batch: {
    mutate: [
      'lib/sqs/pipeline/sqs-batch.rules.ts',
      // The handler chain's fold and the statuses (sqs-handler-chain.ts, sqs-record-result.ts before the
      // one-pipeline redesign).
      'lib/idempotency/record-outcome.ts',
    ],
    specs: [
      'lib/sqs/pipeline/sqs-batch.rules.spec.ts',
      'lib/idempotency/record-outcome.spec.ts',
      'test/sqs-batch.e2e-spec.ts',
    ],
  },
  // SqsModule's queue registry (routes, validation, record-shape checks, warnings; the group keeps the
  // name it had as the dispatcher) and the per-record pipeline (claims, outcomes, counters) are measured
  // apart: together they took 46 min and still left the pipeline's specs running for every registry mutant.
  dispatcher: {
    mutate: ['lib/sqs/nest/sqs-queue.registry.ts'],
    specs: [
      'test/sqs-routing.e2e-spec.ts',
      'test/sqs-fallback.e2e-spec.ts',
      'test/event-validation.e2e-spec.ts',
      'test/hostile-input.e2e-spec.ts',
      'test/lambda-queue-names.e2e-spec.ts',
      // A host's options on a queue resolved without them; the queue named in bootstrap errors.
      'test/sqs-dispatch-overrides.e2e-spec.ts',
      // What the registry checks and says at start-up: handler classes no module provides, the warnings a
      // test reads, key paths (and a Lambda host's own options), batch handlers' declarations, tracing.parent.
      'test/unprovided-handler-classes.e2e-spec.ts',
      'test/startup-warnings-in-tests.e2e-spec.ts',
      'test/key-path-check.e2e-spec.ts',
      'test/batch-handler.e2e-spec.ts',
      'test/option-typos.e2e-spec.ts',
      // A transactional single-record handler beside no batch handler (the batch check is not loaded).
      'test/transactional-store-contract.e2e-spec.ts',
    ],
  },
  // Measured at 25.9% with only the first five: the record-shape checks are exercised by the hostile
  // input spec, a route of several handlers by the routing spec, the counting point by record-counting.
  'record-pipeline': {
    mutate: ['lib/sqs/pipeline/sqs-record.pipeline.ts'],
    specs: [
      'test/sqs-batch.e2e-spec.ts',
      'test/sqs-pipeline.e2e-spec.ts',
      'test/non-error-throws.e2e-spec.ts',
      'test/record-log.e2e-spec.ts',
      'test/sqs-direct-path.e2e-spec.ts',
      'test/hostile-input.e2e-spec.ts',
      'test/sqs-routing.e2e-spec.ts',
      'test/record-counting.e2e-spec.ts',
      'test/lambda.e2e-spec.ts',
      'test/record-pipeline.e2e-spec.ts',
      'test/sqs-consumer-contract.e2e-spec.ts',
      // The parts the pipeline gained since: record spans (and tracing.parent's check), batch handlers'
      // routes, each record's handleMessageTimeout, an envelope acked as skipped.
      'test/record-tracing.e2e-spec.ts',
      'test/option-typos.e2e-spec.ts',
      'test/batch-handler.e2e-spec.ts',
      'test/record-timeout.e2e-spec.ts',
      'test/sqs-envelopes.e2e-spec.ts',
    ],
  },
  'in-memory-store': {
    mutate: ['lib/stores/in-memory/in-memory-idempotency.store.ts'],
    specs: [
      'lib/stores/in-memory/in-memory-idempotency.store.spec.ts',
      'lib/stores/in-memory/in-memory-idempotency.store.bounds.spec.ts',
    ],
  },
  'redis-store': {
    mutate: ['lib/stores/redis/redis-idempotency.store.ts'],
    specs: [
      'lib/stores/redis/redis-idempotency.store.spec.ts',
      'lib/stores/redis/redis-idempotency.store.replies.spec.ts',
      'test/redis-store.e2e-spec.ts',
    ],
  },
  // Measured as one group (service, heartbeat, store calls, fingerprinted claim) at 60.3% in 47 min: its
  // four specs left the store calls' guards, the batch calls and the heartbeat's edges uncovered. Split
  // so that each part runs the specs that exercise it.
  'idempotency-core': {
    mutate: ['lib/idempotency/idempotency.service.ts', 'lib/idempotency/fingerprinted-claim.ts'],
    specs: [
      'lib/idempotency/fingerprinted-claim.spec.ts',
      'test/idempotency-settling.e2e-spec.ts',
      // Transactional handlers' records leave the service for transactional-idempotency.ts here.
      'test/transactional-store-contract.e2e-spec.ts',
      'test/idempotency-contract.e2e-spec.ts',
      'test/idempotency-contract-batched.e2e-spec.ts',
      'test/hostile-store.e2e-spec.ts',
      'test/lambda-lease-deadline.e2e-spec.ts',
      'test/payload-fingerprint.e2e-spec.ts',
      'test/redis-heartbeat.e2e-spec.ts',
    ],
  },
  // Transactional handlers: the claim, the handler's writes and the completion in one Postgres
  // transaction (the store's runInTransaction), and what each answer of it means for the record.
  transactional: {
    mutate: ['lib/idempotency/transactional-idempotency.ts'],
    specs: ['test/transactional-store-contract.e2e-spec.ts', 'test/postgres-transactional.e2e-spec.ts'],
  },
  'store-calls': {
    mutate: ['lib/idempotency/store-calls.ts', 'lib/idempotency/store-call-batcher.ts'],
    specs: [
      'lib/idempotency/store-calls.spec.ts',
      'lib/idempotency/store-call-batcher.spec.ts',
      'test/hostile-store.e2e-spec.ts',
      'test/store-call-batching.e2e-spec.ts',
      'test/redis-outage.e2e-spec.ts',
    ],
  },
  'lease-heartbeat': {
    mutate: ['lib/idempotency/lease-heartbeat.ts'],
    specs: [
      // The edges on a fake clock (a beat 1 ms before the deadline, the renewal interval).
      'lib/idempotency/lease-heartbeat.spec.ts',
      'test/redis-heartbeat.e2e-spec.ts',
      'test/lambda-lease-deadline.e2e-spec.ts',
      'test/hostile-store.e2e-spec.ts',
    ],
  },
  // The policy and the state are pure: their unit specs are fast. The interceptor and the registry need
  // Nest apps; measured together the four took the e2e specs' time for every pure mutant.
  'idempotency-policy': {
    mutate: ['lib/idempotency/idempotency-policy.ts', 'lib/idempotency/idempotency-state.ts'],
    specs: [
      'lib/idempotency/idempotency-policy.spec.ts',
      'lib/idempotency/idempotency-state.spec.ts',
      'test/idempotency-contract.e2e-spec.ts',
    ],
  },
  'idempotency-interceptor': {
    mutate: ['lib/idempotency/idempotency.interceptor.ts', 'lib/idempotency/idempotent-handler.registry.ts'],
    specs: [
      'test/idempotency-contract.e2e-spec.ts',
      'test/idempotency-contract-nest-pipeline.e2e-spec.ts',
      'test/idempotency-module.e2e-spec.ts',
      'test/idempotent-event-pattern.e2e-spec.ts',
      'test/shared-store-services.e2e-spec.ts',
      'test/record-counting.e2e-spec.ts',
      'test/sqs-direct-path.e2e-spec.ts',
      // The counting, journaling and warnings of the interceptor itself, on an in-process transport.
      'test/idempotency-interceptor.e2e-spec.ts',
    ],
  },
  // The stores beyond Redis and memory: where a bug loses or doubles events with no other check to see it.
  // Each runs the conformance kit on its store (dynalite, Postgres 15) and the store's own specs.
  'dynamodb-store': {
    mutate: [
      'lib/stores/dynamodb/dynamodb-idempotency.store.ts',
      'lib/stores/dynamodb/dynamodb-idempotency.item.ts',
      'lib/stores/dynamodb/dynamodb-table.check.ts',
    ],
    specs: [
      'lib/stores/dynamodb/dynamodb-idempotency.store.spec.ts',
      'lib/stores/dynamodb/dynamodb-table.check.spec.ts',
      'test/dynamodb-store.e2e-spec.ts',
    ],
  },
  'postgres-store': {
    mutate: [
      'lib/stores/postgres/postgres-idempotency.store.ts',
      'lib/stores/postgres/postgres-idempotency.statements.ts',
      'lib/stores/postgres/postgres-transactions.ts',
      'lib/stores/postgres/postgres-transactional-run.ts',
      'lib/stores/postgres/postgres-expired-rows.sweeper.ts',
    ],
    specs: [
      'lib/stores/postgres/postgres-expired-rows.sweeper.spec.ts',
      'test/postgres-store.e2e-spec.ts',
      'test/postgres-transactional.e2e-spec.ts',
      'test/postgres-transactional-typeorm.e2e-spec.ts',
      'test/postgres-transactions.e2e-spec.ts',
      'test/store-clients-you-own.e2e-spec.ts',
      // What the store refuses and names, pools from options, adapters, the sweeper's start; batch transactions.
      'test/postgres-store-edges.e2e-spec.ts',
      'test/batch-handler-transactional.e2e-spec.ts',
    ],
  },
  // The producer: the encoder (what consumers read) and the batch sender with its retries of failed entries.
  producer: {
    mutate: ['lib/sqs/producer/sqs-event.encoder.ts', 'lib/sqs/producer/sqs-batch.sender.ts'],
    specs: [
      'lib/sqs/producer/sqs-event.encoder.spec.ts',
      'lib/sqs/producer/sqs-batch.sender.spec.ts',
      'test/sqs-producer.e2e-spec.ts',
    ],
  },
  // A message's body to an event: decoding, the envelopes (SNS, EventBridge, S3, CloudEvents), the body
  // decoder and the plain event mapper.
  decoding: {
    mutate: [
      'lib/sqs/routing/sqs-message.decoding.ts',
      'lib/sqs/routing/plain-event.mapper.ts',
      'lib/sqs/sqs-body.decoder.ts',
      'lib/sqs/routing/envelopes/envelope-opener.ts',
      'lib/sqs/routing/envelopes/envelope-fields.ts',
      'lib/sqs/routing/envelopes/sns.envelope.ts',
      'lib/sqs/routing/envelopes/eventbridge.envelope.ts',
      'lib/sqs/routing/envelopes/s3.envelope.ts',
      'lib/sqs/routing/envelopes/cloudevents.envelope.ts',
    ],
    specs: [
      'lib/sqs/routing/sqs-message.decoding.spec.ts',
      'lib/sqs/routing/plain-event.mapper.spec.ts',
      'lib/sqs/routing/sqs-queue.router.spec.ts',
      'lib/sqs/routing/sqs-event.validator.spec.ts',
      'lib/sqs/routing/envelopes/envelope-readers.spec.ts',
      'lib/sqs/sqs-body.decoder.spec.ts',
      'lib/testing/sqs-envelope.builders.spec.ts',
      'test/sqs-envelopes.e2e-spec.ts',
      'test/sqs-server-envelopes.e2e-spec.ts',
      'test/sqs-decoders.e2e-spec.ts',
      // Real-world records (AWS samples, Powertools, SAM) and hostile bodies.
      'test/aws-samples.e2e-spec.ts',
      'test/hostile-input.e2e-spec.ts',
      'test/key-path-check.e2e-spec.ts',
    ],
  },
  // The hosts: what each answers SQS (acks, visibility changes, batch item failures, draining).
  'lambda-host': {
    mutate: ['lib/lambda/sqs-lambda-event.processor.ts'],
    specs: [
      'test/lambda.e2e-spec.ts',
      'test/lambda-lease-deadline.e2e-spec.ts',
      'test/lambda-lost-metadata.e2e-spec.ts',
      // The queue named by a record's ARN; the handler's own dispatch options checked at its boot.
      'test/lambda-queue-names.e2e-spec.ts',
      'test/sqs-dispatch-overrides.e2e-spec.ts',
    ],
  },
  'queue-consumer': {
    mutate: ['lib/sqs/consumer/sqs-queue.consumer.ts', 'lib/sqs/consumer/sqs-message.mapper.ts'],
    specs: [
      'lib/sqs/consumer/sqs-message.mapper.spec.ts',
      'test/sqs-consumer-contract.e2e-spec.ts',
      'test/sqs-consumer-lifecycle.e2e-spec.ts',
      'test/sqs-consumer-fifo.e2e-spec.ts',
      'test/sqs-consumer-options.e2e-spec.ts',
      // sqs-consumer's events, a missing queue, failed receives and their backoff, start-up.
      'test/sqs-consumer-events.e2e-spec.ts',
      'test/sqs-missing-queue.e2e-spec.ts',
      'test/sqs-outage.e2e-spec.ts',
      'test/sqs-consumer-bootstrap.e2e-spec.ts',
      // The consumer alone: each status's answer, its lines, a failing backoff function, failed deletes and changes.
      'test/sqs-queue-consumer.e2e-spec.ts',
    ],
  },
  'sqs-server': {
    mutate: ['lib/microservices/sqs.server.ts'],
    specs: [
      'lib/microservices/sqs.server.spec.ts',
      'test/sqs-server.e2e-spec.ts',
      'test/sqs-server-hybrid.e2e-spec.ts',
      'test/sqs-server-envelopes.e2e-spec.ts',
      'test/sqs-server-edges.e2e-spec.ts',
      // Its handlers' names on the record spans.
      'test/tracing-queue.e2e-spec.ts',
    ],
  },
  'idempotency-keys': {
    mutate: [
      'lib/idempotency/idempotency-key.ts',
      'lib/idempotency/store-key.ts',
      'lib/idempotency/payload-fingerprint.ts',
      'lib/idempotency/service-identity.ts',
      'lib/idempotency/ttl-limits.ts',
      'lib/idempotency/idempotency-options.validation.ts',
    ],
    specs: [
      'lib/idempotency/idempotency-key.spec.ts',
      'lib/idempotency/store-key.spec.ts',
      'lib/idempotency/payload-fingerprint.spec.ts',
      'lib/idempotency/service-identity.spec.ts',
      'lib/idempotency/ttl-limits.spec.ts',
      'lib/idempotency/idempotency-options.validation.spec.ts',
      'test/option-bounds.e2e-spec.ts',
      'test/idempotency-contract.e2e-spec.ts',
    ],
  },
};

/** The score Stryker reports: detected mutants over valid ones (compile errors and ignored ones aside). */
function tally(results) {
  const count = {
    killed: 0,
    timeout: 0,
    survived: 0,
    noCoverage: 0,
    compileError: 0,
    runtimeError: 0,
    ignored: 0,
  };
  for (const { status } of results) {
    const key = {
      Killed: 'killed',
      Timeout: 'timeout',
      Survived: 'survived',
      NoCoverage: 'noCoverage',
      CompileError: 'compileError',
      RuntimeError: 'runtimeError',
      Ignored: 'ignored',
    }[status];
    if (key) count[key]++;
  }
  const detected = count.killed + count.timeout;
  const valid = detected + count.survived + count.noCoverage;
  return { ...count, score: valid === 0 ? null : Math.round((detected / valid) * 1000) / 10 };
}

// Stryker imports stryker.config.mjs itself (the same module instance as baseOptions), copies only its top
// level and merges a group's options into the nested objects in place: a second group in the same run
// would start from the first one's leftovers (and fail in Stryker's config reader). Each group starts
// from the options as the file wrote them.
const pristineOptions = structuredClone(baseOptions);
function restoreBaseOptions() {
  for (const key of Object.keys(baseOptions)) delete baseOptions[key];
  Object.assign(baseOptions, structuredClone(pristineOptions));
}

async function runGroup(name, group) {
  restoreBaseOptions();
  const { Stryker } = await import('@stryker-mutator/core');
  const escaped = group.specs.map((spec) => spec.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const dir = join(reports, name);
  mkdirSync(dir, { recursive: true });
  // Read by test/mutation/jest.mutation.config.js in Stryker's workers (they inherit the environment).
  process.env.MUTATION_SPECS = `(${escaped.join('|')})$`;
  // The commit the sandbox is copied from: the code measured, however long the run (later commits are not).
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
  const started = performance.now();
  const stryker = new Stryker({
    ...baseOptions,
    mutate: group.mutate,
    // One sandbox folder per group, so that groups can run side by side (two shells).
    tempDirName: join('.stryker-tmp', name),
    // MUTATION_CONCURRENCY=1 leaves a core to the rest of a shared 2-core machine.
    ...(process.env.MUTATION_CONCURRENCY ? { concurrency: Number(process.env.MUTATION_CONCURRENCY) } : {}),
    htmlReporter: { fileName: join(dir, 'index.html') },
    jsonReporter: { fileName: join(dir, 'mutation.json') },
  });
  const results = await stryker.runMutationTest();
  const minutes = Math.round((performance.now() - started) / 6000) / 10;
  const files = {};
  for (const file of group.mutate) {
    files[file] = tally(results.filter((result) => relative(root, result.fileName) === file));
  }
  // A survivor is named by its column and the code it replaced as well as its line: on one line Stryker
  // often makes several mutants of one kind (`a && b` → `true` for the whole condition and for each
  // operand), which its line, mutator and replacement alone cannot tell apart.
  const sources = new Map();
  const originalOf = ({ fileName, location: { start, end } }) => {
    if (!sources.has(fileName)) sources.set(fileName, readFileSync(fileName, 'utf8').split('\n'));
    const lines = sources.get(fileName).slice(start.line - 1, end.line);
    // Stryker's locations are 1-based, the end column exclusive.
    lines[lines.length - 1] = lines[lines.length - 1].slice(0, end.column - 1);
    lines[0] = lines[0].slice(start.column - 1);
    return lines.join('\n');
  };
  const survivors = results
    .filter((result) => result.status === 'Survived' || result.status === 'NoCoverage')
    .map((result) => ({
      file: relative(root, result.fileName),
      line: result.location.start.line,
      column: result.location.start.column,
      mutator: result.mutatorName,
      original: originalOf(result),
      replacement: result.replacement,
      status: result.status,
      // Covered only while no test ran (a beforeAll, a module's load): `ignoreStatic` ran only the
      // tests that covered it at run time, if any.
      ...(result.static ? { static: true } : {}),
    }));
  const summary = {
    group: name,
    commit,
    minutes,
    measuredAt: new Date().toISOString(),
    total: tally(results),
    files,
    survivors,
  };
  writeFileSync(join(reports, `${name}.json`), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

/** How many commits touched `file` after `commit` (and whether it is still there): is the row today's code? */
function changedSince(commit, file) {
  if (!commit) return '-';
  const count = execFileSync('git', ['rev-list', '--count', `${commit}..HEAD`, '--', file], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
  const gone = !existsSync(join(root, file));
  if (count === '0') return gone ? 'file gone' : 'no';
  return `${count} commit${count === '1' ? '' : 's'}${gone ? ', file moved or gone' : ''}`;
}

/** reports/mutation/summary.md from every group measured so far. */
function writeSummary() {
  const groups = readdirSync(reports)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(reports, file), 'utf8')))
    .filter((summary) => summary.group in GROUPS);
  const lines = [
    '# Mutation score per file',
    '',
    'Written by `npm run test:mutation` (scripts/mutation.mjs); equivalent survivors: test/mutation/EQUIVALENT.md.',
    '',
    '"Changed since" counts the commits that touched the file after the one measured (`git log <commit>..HEAD -- <file>`):',
    "a row with changes states older code than today's, and its group is due to run again.",
    '',
    '| Group | Commit | Minutes | File | Score % | Killed | Timeout | Survived | No coverage | Compile errors | Changed since |',
    '| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const summary of groups) {
    for (const [file, figures] of Object.entries(summary.files)) {
      lines.push(
        `| ${summary.group} | ${summary.commit ?? '-'} | ${summary.minutes} | \`${file}\` | ${figures.score ?? '-'} | ${figures.killed} | ` +
          `${figures.timeout} | ${figures.survived} | ${figures.noCoverage} | ${figures.compileError} | ` +
          `${changedSince(summary.commit, file)} |`,
      );
    }
  }
  lines.push(...luaSection());
  writeFileSync(join(reports, 'summary.md'), `${lines.join('\n')}\n`);
}

/** The Lua scripts' hand mutations (`npm run test:mutation:lua`, scripts/lua-mutation.mjs), once measured. */
function luaSection() {
  let lua;
  try {
    lua = JSON.parse(readFileSync(join(reports, 'lua.json'), 'utf8'));
  } catch {
    return [];
  }
  const cell = (text) => text.replace(/\|/g, '\\|').replace(/\n/g, '⏎');
  return [
    '',
    '## Lua scripts: `lib/stores/redis/redis-idempotency.scripts.ts`',
    '',
    `Written by \`npm run test:mutation:lua\` (scripts/lua-mutation.mjs) at ${lua.commit} in ${lua.minutes} min: ` +
      `${lua.mutations} mutations, ${lua.caught} caught, ${lua.equivalent} equivalent, ${lua.survived} survived; ` +
      `each run against ${lua.specs.map((spec) => `\`${spec}\``).join(', ')}` +
      (lua.rerun
        ? `; mutations ${lua.rerun.mutations.join(', ')} run again at ${lua.rerun.commit}, after the tests that catch them.`
        : '.'),
    '',
    '| # | Script | Mutation | Result |',
    '| ---: | --- | --- | --- |',
    ...lua.results.map(
      (result) =>
        `| ${result.id} | ${result.script} | ${cell(result.what)}: \`${cell(result.from)}\` → \`${cell(result.to) || ' '}\` | ` +
        `${result.status === 'caught' ? `caught by ${cell(result.caughtBy)}` : `${result.status}${result.why ? `: ${cell(result.why)}` : ''}`} |`,
    ),
  ];
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--summary')) {
    writeSummary(); // from the groups' JSON already in reports/mutation
    return;
  }
  if (args.includes('--list')) {
    for (const [name, group] of Object.entries(GROUPS)) {
      console.log(`${name}\n  mutates: ${group.mutate.join(', ')}\n  specs:   ${group.specs.join(', ')}`);
    }
    return;
  }
  const unknown = args.filter((name) => !(name in GROUPS));
  if (unknown.length > 0) {
    throw new Error(
      `Unknown group(s) ${unknown.join(', ')}; the groups are ${Object.keys(GROUPS).join(', ')}.`,
    );
  }
  const names = args.length > 0 ? args : Object.keys(GROUPS);
  mkdirSync(reports, { recursive: true });

  // The real parts the specs talk to, as Jest's global setup starts them for `npm test`.
  const { default: globalSetup } = await import('../test/setup/global-setup.mjs');
  await globalSetup();
  try {
    for (const name of names) {
      const summary = await runGroup(name, GROUPS[name]);
      writeSummary();
      console.log(
        `mutation group ${name}: score ${summary.total.score}% in ${summary.minutes} min ` +
          `(${summary.total.survived} survived, ${summary.total.noCoverage} without coverage)`,
      );
    }
  } finally {
    await globalThis.__FAUXQS__?.stop();
    await globalThis.__REDIS__?.stop();
    if (process.env.TEST_NOT_RUN_DIR) rmSync(process.env.TEST_NOT_RUN_DIR, { recursive: true, force: true });
  }
}

await main();
