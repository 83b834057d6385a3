import { join } from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { forkTs } from './support/fork-ts';
import type { LinkReport } from './fixtures/tracing-aws-sdk.main';

/**
 * With `@opentelemetry/instrumentation-aws-sdk` active too (#52), the trace still connects: the
 * instrumentation writes its own `SendMessage`/`SendMessageBatch` span into the message attributes
 * (over the context SqsProducer wrote), and that span is a child of SqsProducer's `send` span, so each
 * record span links into the request's trace. It patches `require`, so it runs in a process of its own.
 */

function run(): Promise<LinkReport[]> {
  const child = forkTs(join(__dirname, 'fixtures', 'tracing-aws-sdk.main.ts'), {});
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  return new Promise((resolve, reject) => {
    let reports: LinkReport[] | undefined;
    child.on('message', (message: LinkReport[]) => (reports = message));
    child.once('exit', (code) =>
      code === 0 && reports ? resolve(reports) : reject(new Error(`exited ${code}: ${stderr.join('')}`)),
    );
  });
}

describe('tracing beside @opentelemetry/instrumentation-aws-sdk', () => {
  it("links every record span into the sender's trace, to the AWS SDK's span of the send", async () => {
    const reports = await run();
    expect(reports).toHaveLength(3);
    // Which span ends up in the attribute: the instrumentation's (`<queue> send`, PRODUCER), written
    // last, whose parent is SqsProducer's `send orders` (docs/tracing.md says so).
    for (const report of reports) {
      expect(report).toEqual({
        record: expect.stringMatching(/^h:/),
        linkedTo: expect.stringMatching(/^aws-sdk-traced-\d+ send$/),
        linkedKind: SpanKind.PRODUCER,
        linkedParent: 'send orders',
        sameTrace: true,
      });
    }
  }, 60_000);
});
