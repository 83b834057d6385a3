// The Jest config of a mutation group (scripts/mutation.mjs): the suite's own, limited to the group's
// specs (MUTATION_SPECS, a regex), without the global setup: the script starts the SQS emulator and
// redis-server once for every group, and Stryker's workers inherit their addresses.
const base = require('../../jest.config.js');

const { globalSetup, globalTeardown, ...rest } = base;
void globalSetup;
void globalTeardown;

module.exports = {
  ...rest,
  rootDir: '../..',
  testRegex: process.env.MUTATION_SPECS ?? base.testRegex,
};
