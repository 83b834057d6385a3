import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SqsContext } from '../sqs/sqs-context';
import { SqsRpcContext } from './sqs-rpc.context';
import { SqsServer } from './sqs.server';

const url = 'http://127.0.0.1:1/000000000000/orders';

describe('SqsServer options', () => {
  it('refuses unusable queues where the server is built, naming each problem', () => {
    expect(() => new SqsServer({ queues: [] })).toThrow('SqsServer: give at least one queue');
    let error: Error | undefined;
    try {
      new SqsServer({
        queues: [
          { name: 'orders', url },
          { name: 'orders', url },
          { name: 'refunds', url: process.env.UNSET_QUEUE_URL as string },
          { name: 'payments', url, concurrency: 0 },
          { name: 'audit', url, discriminator: { field: 'meta..type' } },
        ],
      });
    } catch (caught) {
      error = caught as Error;
    }
    expect(error?.message).toContain('SqsServer cannot start:');
    expect(error?.message).toContain('the queue name "orders" is configured twice');
    expect(error?.message).toContain(
      'queue "refunds" has no url (undefined); an unset environment variable?',
    );
    expect(error?.message).toContain(
      'SQS SqsServer queue "payments": concurrency must be a positive integer, got 0.',
    );
    expect(error?.message).toContain('SqsServer queue "audit": discriminator');
  });

  it('lists every problem on a line of its own, an empty url among them', () => {
    expect(
      () =>
        new SqsServer({
          queues: [
            { name: 'orders', url: '' },
            { name: 'refunds', url: process.env.UNSET_QUEUE_URL as string },
          ],
        }),
    ).toThrow(
      'SqsServer cannot start:\n- queue "orders" has no url (""); an unset environment variable?\n' +
        '- queue "refunds" has no url (undefined); an unset environment variable?',
    );
  });

  it('names itself in a mistyped option, and in a tracing option it cannot use', async () => {
    expect(() => new SqsServer({ queues: [{ name: 'orders', url }], waitTimeSecond: 1 } as never)).toThrow(
      'SqsServer options: unknown option "waitTimeSecond"',
    );
    const server = new SqsServer({ queues: [{ name: 'orders', url }], tracing: { parent: 'span' as never } });
    const error = await new Promise<unknown>((resolve) => void server.listen(resolve));
    await server.close();
    expect((error as Error).message).toMatch(/^SqsServer: tracing\.parent must be 'ambient'/);
  });

  it('refuses unknown consumer events, and unwrap() before listening', () => {
    const server = new SqsServer({ queues: [{ name: 'orders', url }] });
    expect(() => server.on('procesing_error' as 'error', () => undefined)).toThrow(
      'SqsServer.on(): unknown event "procesing_error"',
    );
    expect(() => server.unwrap()).toThrow('SqsServer is not listening');
  });
});

describe('SqsRpcContext', () => {
  it("reads through to the record's SqsContext, getters and methods", () => {
    const record = {
      messageId: 'm-1',
      body: '{}',
      attributes: { ApproximateReceiveCount: '2', MessageGroupId: 'g' },
      messageAttributes: { tenant: { dataType: 'String', stringValue: 'acme' } },
    };
    const context = new SqsContext(record, 'orders');
    context.eventType = 'order_placed';
    context.state.idempotencyKey = 'k-1';
    const rpc = new SqsRpcContext(context);
    expect(rpc.getSqsContext()).toBe(context);
    expect(rpc.getArgs()).toEqual([context]);
    expect([rpc.messageId, rpc.queue, rpc.eventType, rpc.receiveCount, rpc.groupId]).toEqual([
      'm-1',
      'orders',
      'order_placed',
      2,
      'g',
    ]);
    expect(rpc.state.idempotencyKey).toBe('k-1');
    expect(rpc.record).toBe(record);
    expect(rpc.messageAttribute('tenant')).toBe('acme');
    expect(rpc.envelope('sns')).toBeUndefined();
  });
});

describe('@nestjs/microservices stays an optional peer', () => {
  // Only this folder (the `microservices` entry point) may load it; the main entry must not.
  const root = join(__dirname, '..');
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? sources(join(dir, entry.name))
        : entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')
          ? [join(dir, entry.name)]
          : [],
    );

  it('is imported at run time by lib/microservices only', () => {
    const offenders = sources(root)
      .filter((file) => !file.startsWith(__dirname))
      .filter((file) =>
        /^import (?!type )[^;]*from '@nestjs\/microservices[/']/m.test(readFileSync(file, 'utf8')),
      )
      .map((file) => relative(root, file));
    expect(offenders).toEqual([]);
    expect(readFileSync(join(root, 'index.ts'), 'utf8')).not.toContain('./microservices');
  });
});
