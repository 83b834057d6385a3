import { join } from 'node:path';
import { forkTs } from './support/fork-ts';
import type { EnvelopeLoadingReport } from './fixtures/envelope-loading.main';

/**
 * The envelope readers (SNS, EventBridge, S3, CloudEvents) load only where a queue opens envelopes
 * (issue 50: what an app does not use is not loaded). A process of its own (Node's module cache is
 * the witness) runs an app of raw messages, then one whose queues take SNS notifications.
 */

function runWorker(): Promise<EnvelopeLoadingReport[]> {
  const child = forkTs(join(__dirname, 'fixtures', 'envelope-loading.main.ts'), {});
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  return new Promise((resolve, reject) => {
    let reports: EnvelopeLoadingReport[] | undefined;
    child.on('message', (message: EnvelopeLoadingReport[]) => (reports = message));
    child.once('exit', (code) =>
      code === 0 && reports
        ? resolve(reports)
        : reject(new Error(`the worker exited ${code}: ${stderr.join('')}`)),
    );
  });
}

describe('envelope readers', () => {
  it('are not loaded by an app without an envelope option, and open the envelope of an app with one', async () => {
    const [raw, sns] = await runWorker();

    expect(raw).toEqual({
      status: 'OK',
      payload: { type: 'order_paid', orderId: 'o-1' },
      envelopes: [],
      loaded: [],
    });

    expect(sns).toMatchObject({
      status: 'OK',
      payload: { type: 'order_paid', orderId: 'o-2' },
      envelopes: ['sns'],
    });
    expect(sns.loaded).toEqual(
      expect.arrayContaining(['envelope-opener.ts', 'sns.envelope.ts', 's3.envelope.ts']),
    );
  }, 60_000);
});
