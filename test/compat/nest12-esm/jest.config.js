// Jest in ESM mode runs what tsc emitted (build/), untransformed: the modules Node itself would load.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  rootDir: '.',
  testRegex: 'build/test/.*\\.compat-test\\.js$',
  transform: {},
  globalSetup: '<rootDir>/test/global-setup.mjs',
  globalTeardown: '<rootDir>/test/global-teardown.mjs',
  testTimeout: 30000,
};
