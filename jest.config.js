// `npm test`: the fast suite. Unit specs sit next to the code (lib/**/*.spec.ts); end-to-end specs
// live in test/ (*.e2e-spec.ts). The long runs (chaos, races at scale, the Redis Cluster, the
// browser check) are test/*.long-spec.ts: `npm run test:long` (jest.long.config.js).
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/lib', '<rootDir>/test'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json', 'mjs'],
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  // Also prints, after the summary, the checks this machine could not run and how to enable them.
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  // Most e2e specs wait on servers (Redis, fauxqs, Postgres), not on the CPU: two workers overlap
  // those waits even on a 2-core machine, where Jest's default would run one.
  maxWorkers: 2,
  // Deadlines are for a hung test, not a measure of speed: a loaded CI runner must still pass.
  testTimeout: 60_000,
  // How long a worker may take to exit once its spec files are done before Jest kills it and prints
  // "A worker process has failed to exit gracefully". Jest's 500 ms is shorter than a worker takes to
  // end with nothing left open on a loaded 2-core machine: freeing a heap of several hundred MB took
  // 400 to 800 ms there (its 'exit' event 20 ms after Jest's request, Jest seeing the exit 650 ms
  // later). Anything a spec leaves open for longer (a socket, an interval, a timer of seconds) still
  // keeps a worker past this and is reported.
  workerGracefulExitTimeout: 3_000,
};
