// Unit specs sit next to the code (lib: *.spec.ts); e2e specs live in test/ (*.e2e-spec.ts).
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/lib', '<rootDir>/test'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json', 'mjs'],
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  // Also prints, after the summary, the checks this machine could not run and how to enable them.
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  testTimeout: 20000,
};
