import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';

/**
 * What some specs need from the machine beyond `npm ci`, and what happens without it.
 *
 * `npm test` must pass on a fresh machine with nothing installed by hand, and must not pretend:
 * a spec whose prerequisite is missing is skipped and noted, and the run ends with a "Not run here"
 * list naming each check and the one command that enables it (printed by test/setup/global-teardown.mjs).
 * CI cannot skip: `.ci/run` installs the prerequisites and sets REQUIRE_ALL_CHECKS=1, under which a
 * missing one fails the spec instead.
 */
interface Prerequisite {
  /** What is not checked without it, for the "Not run here" list. */
  check: string;
  /** Why it is missing here, or `undefined` when it is available. */
  missing(): string | undefined;
  /** The one command that makes it available on this kind of machine (Debian). */
  enable: string;
}

/** Where the browser test finds Chromium: CHROMIUM_PATH, else Debian's package. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const PREREQUISITES = {
  'redis-server': {
    check: 'the specs that run a real Redis (stores, outages, claim race, chaos, cluster)',
    // The Jest global setup tries to start a private redis-server and says why it could not.
    missing: () => process.env.TEST_REDIS_MISSING || undefined,
    enable: 'sudo apt-get install -y redis-server',
  },
  postgres: {
    check: 'the Postgres store specs (conformance kit, claim race, the hosts, the sweeper)',
    // The Jest global setup tries to reach PostgreSQL (PG_URL, DATABASE_URL or 127.0.0.1:5432) and says why it could not.
    missing: () => process.env.TEST_POSTGRES_MISSING || undefined,
    enable:
      'sudo apt-get install -y postgresql && sudo pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start   (or PG_URL=postgres://...)',
  },
  chromium: {
    check: 'the Idempotency Center page in a real browser',
    missing: () => (existsSync(CHROMIUM_PATH) ? undefined : `no Chromium at ${CHROMIUM_PATH}`),
    enable: 'sudo apt-get install -y chromium   (or CHROMIUM_PATH=/path/to/chromium)',
  },
} satisfies Record<string, Prerequisite>;

export type PrerequisiteName = keyof typeof PREREQUISITES;

/** A spec's view of one prerequisite: `describe`/`it` that run when it is there, skip (noted) when not. */
export interface PrerequisiteGate {
  readonly available: boolean;
  readonly describe: jest.Describe;
  readonly it: jest.It;
  /** For `describeIdempotencyStore(name, factory, { runner })`: its cases run or skip with the gate. */
  readonly runner: {
    describe: jest.Describe;
    it: jest.It;
    beforeEach: jest.Lifecycle;
    afterEach: jest.Lifecycle;
  };
}

/** Set by `.ci/run`: a missing prerequisite fails the run instead of being skipped. */
export const REQUIRE_ALL_CHECKS = process.env.REQUIRE_ALL_CHECKS === '1';

/**
 * Gates the tests that need `name`. Call it at the top level of a spec file:
 *
 * ```ts
 * const redis = requires('redis-server');
 * redis.describe('the Redis store', () => { ... });
 * ```
 */
export function requires(name: PrerequisiteName): PrerequisiteGate {
  const prerequisite: Prerequisite = PREREQUISITES[name];
  const why = prerequisite.missing();
  if (why === undefined)
    return { available: true, describe, it, runner: { describe, it, beforeEach, afterEach } };
  if (REQUIRE_ALL_CHECKS) {
    // Thrown while Jest loads the spec: the suite fails, with this as its reason.
    throw new Error(
      `${name} is missing (${why}) and REQUIRE_ALL_CHECKS=1 forbids skipping ${prerequisite.check}. ` +
        `Enable it with: ${prerequisite.enable}`,
    );
  }
  noteNotRun(name, prerequisite, why);
  return {
    available: false,
    describe: describe.skip,
    it: it.skip,
    runner: { describe: describe.skip, it: it.skip, beforeEach, afterEach },
  };
}

/** Leaves a note for the reporter (one file per spec and prerequisite: workers run in parallel). */
function noteNotRun(name: string, prerequisite: Prerequisite, why: string): void {
  const dir = process.env.TEST_NOT_RUN_DIR;
  if (!dir) return;
  const testPath = expect.getState().testPath ?? 'unknown spec';
  const spec = relative(join(__dirname, '..', '..'), testPath);
  const file = `${name}-${createHash('sha1').update(spec).digest('hex').slice(0, 12)}.json`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, file),
    JSON.stringify({ name, check: prerequisite.check, why, enable: prerequisite.enable, spec }),
  );
}
