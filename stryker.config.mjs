// StrykerJS settings shared by every group of `npm run test:mutation` (scripts/mutation.mjs). A group
// adds what it mutates (`mutate`) and the specs that exercise it (`jest.config.testRegex`): running
// the whole suite per mutant would take days on a 2-core machine.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: {
    projectType: 'custom',
    configFile: 'test/mutation/jest.mutation.config.js',
    enableFindRelatedTests: true,
  },
  // Each mutant runs only the tests that covered its code in the dry run.
  coverageAnalysis: 'perTest',
  // Mutants that do not compile are dropped before any test runs (they are not part of the score).
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.mutation.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  concurrency: 2,
  timeoutMS: 10_000,
  timeoutFactor: 2,
  reporters: ['progress', 'clear-text', 'html', 'json'],
  clearTextReporter: { reportScoreTable: true, reportMutants: false },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: [
    '.stryker-tmp',
    'dist',
    'coverage',
    'reports',
    'docs',
    'test/compat',
    '.bench-tmp',
    '.readme-check',
    'test-output',
  ],
  ignoreStatic: true,
  thresholds: { high: 90, low: 85 },
};
