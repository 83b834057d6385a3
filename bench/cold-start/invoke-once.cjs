// One cold start, as the Lambda runtime does it: load the handler module (a bundle), invoke it
// with a one-record SQS event (a first sighting), and print the answer with this process's CPU
// time and peak memory on one line that starts with ANSWER_MARK; then exit at once (a sandbox
// is frozen, not shut down). Usage: node invoke-once.cjs <bundle.js>
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

const { handler } = require(require('node:path').resolve(process.argv[2]));
Promise.resolve(handler(event, context)).then(
  (answer) => {
    const cpu = process.cpuUsage();
    const line = { answer, cpuMs: (cpu.user + cpu.system) / 1000, maxRssKb: process.resourceUsage().maxRSS };
    process.stdout.write(`${ANSWER_MARK}${JSON.stringify(line)}\n`, () => process.exit(0));
  },
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`, () => process.exit(1));
  },
);
