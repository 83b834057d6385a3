// `npm run test:long`: the runs that take minutes (chaos with worker processes SIGKILLed, claim
// races across processes at scale, the Redis Cluster, the Center in a real browser). CI runs them
// after `npm test`; see CONTRIBUTING.md.
const fast = require('./jest.config');

module.exports = {
  ...fast,
  roots: ['<rootDir>/test'],
  testRegex: '.*\\.long-spec\\.ts$',
  // The long specs start their own worker processes and servers: one spec at a time.
  maxWorkers: 1,
  testTimeout: 300_000,
};
