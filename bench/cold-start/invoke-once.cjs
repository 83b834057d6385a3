// One cold start, as the Lambda runtime does it: load the handler module (a bundle), invoke it
// with a one-record SQS event (a first sighting), and print the answer with this process's CPU
// time and peak memory on one line that starts with ANSWER_MARK; then exit at once (a sandbox
// is frozen, not shut down). Usage: node invoke-once.cjs <bundle.js>
//
// COLD_START_PAUSE_MS (default 0): wait that long between the import and the invocation, as a
// sandbox whose INIT ran before its first request does (provisioned concurrency, proactive
// initialisation); without it the invocation comes right after the import, as on an on-demand cold
// start. Either way the line also carries the first batch's own CPU and wall time, from the call to
// the answer (what is left of a boot started at import counts in it).
'use strict';
const { randomUUID } = require('node:crypto');

const ANSWER_MARK = '@@cold-start-answer ';
const id = randomUUID();
const event = {
  Records: [
    {
      messageId: randomUUID(),
      receiptHandle: 'receipt',
      body: JSON.stringify({ type: 'order_created', id, orderId: `o-${id}`, amount: 2 }),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'AIDAEXAMPLE',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
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

const pauseMs = Number(process.env.COLD_START_PAUSE_MS ?? 0);
const cpuMs = (cpu) => (cpu.user + cpu.system) / 1000;

function invoke() {
  const cpuBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  Promise.resolve(handler(event, context)).then(
    (answer) => {
      const firstBatch = {
        cpuMs: cpuMs(process.cpuUsage(cpuBefore)),
        wallMs: Number(process.hrtime.bigint() - wallBefore) / 1e6,
      };
      const line = {
        answer,
        cpuMs: cpuMs(process.cpuUsage()),
        maxRssKb: process.resourceUsage().maxRSS,
        firstBatch,
      };
      process.stdout.write(`${ANSWER_MARK}${JSON.stringify(line)}\n`, () => process.exit(0));
    },
    (error) => {
      process.stderr.write(`${error?.stack ?? error}\n`, () => process.exit(1));
    },
  );
}

const { handler } = require(require('node:path').resolve(process.argv[2]));
if (pauseMs > 0) setTimeout(invoke, pauseMs);
else invoke();
