// Where a cold start's CPU goes, bundle against bundle (bench/PROFILE.md, "Cold start", step two).
// Usage: node bench/cold-start/phases.cjs ROUNDS bundle-a.js bundle-b.js ...
// Each bundle a Lambda handler module (as the cold-start bench builds them); each run a new process
// that reads process.cpuUsage() at its first line, after the `require` of the bundle and after the
// answer to one one-record SQS batch. The bundles are started in turn, A B C A B C ..., after a
// warm-up run of each; printed: CPU ms medians of each phase, and each bundle's whole CPU over the
// first's, the median of the rounds' ratios. The environment is passed on (REDIS_URL and the like);
// AWS_LAMBDA_FUNCTION_NAME is set, as in Lambda.
'use strict';
// First: what Node's start cost, before this file loads anything.
const atStart = process.cpuUsage();
const { execFileSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { loadavg } = require('node:os');
const { resolve } = require('node:path');

const cpuMs = (cpu) => (cpu.user + cpu.system) / 1000;

/** One process: the bundle loaded and invoked once; prints its phases as the last line of stdout. */
function probe(bundle) {
  const id = randomUUID();
  const now = String(Date.now());
  const event = {
    Records: [
      {
        messageId: randomUUID(),
        receiptHandle: 'receipt',
        body: JSON.stringify({ type: 'order_created', id, orderId: `o-${id}`, amount: 2 }),
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: now,
          SenderId: 'AIDAEXAMPLE',
          ApproximateFirstReceiveTimestamp: now,
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:orders',
        awsRegion: 'us-east-1',
      },
    ],
  };
  const deadline = Date.now() + 30_000;
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => deadline - Date.now(),
  };
  const { handler } = require(resolve(bundle));
  const required = process.cpuUsage();
  Promise.resolve(handler(event, context)).then((answer) => {
    const answered = process.cpuUsage();
    if (answer.batchItemFailures.length > 0) throw new Error(`${bundle}: the record failed`);
    const phases = {
      start: cpuMs(atStart),
      require: cpuMs(required) - cpuMs(atStart),
      boot: cpuMs(answered) - cpuMs(required),
      total: cpuMs(answered),
    };
    process.stdout.write(`\n${JSON.stringify(phases)}\n`, () => process.exit(0));
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function compare(rounds, bundles) {
  const lambda = {
    AWS_LAMBDA_FUNCTION_NAME: 'orders-consumer',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
  const env = {
    ...process.env,
    ...Object.fromEntries(Object.entries(lambda).filter(([name]) => !process.env[name])),
  };
  const runs = bundles.map(() => []);
  const loadBefore = loadavg()[0];
  for (let round = -1; round < rounds; round++) {
    bundles.forEach((bundle, index) => {
      const out = execFileSync(process.execPath, [__filename, '--probe', bundle], {
        env,
        maxBuffer: 16 * 2 ** 20,
      });
      if (round >= 0) runs[index].push(JSON.parse(out.toString().trim().split('\n').pop()));
    });
  }
  console.log(
    `${rounds} rounds, load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}; CPU ms medians`,
  );
  bundles.forEach((bundle, index) => {
    const phase = (name) => median(runs[index].map((run) => run[name])).toFixed(1);
    const ratio = median(runs[index].map((run, round) => run.total / runs[0][round].total)).toFixed(3);
    console.log(
      `${bundle}: start ${phase('start')}, require ${phase('require')}, boot and first batch ${phase('boot')}, total ${phase('total')}; ${ratio}x the first`,
    );
  });
}

if (process.argv[2] === '--probe') probe(process.argv[3]);
else compare(Number(process.argv[2]), process.argv.slice(3));
