import { join } from 'node:path';
import { forkTs } from './support/fork-ts';
import type { LoadingReport } from './fixtures/record-observers.main';

/**
 * What an app loads is what it configures (#50): in one fresh process, apps booted one after another,
 * each with one more optional part, report which of those parts' files Node has loaded. An app without
 * `stats` or the Center loads nothing of the counters, journal, stats report or metrics (only the
 * `IdempotencyStats` token, whose report loads at its first call), and still runs; the store-call
 * batcher, the transactional claim, the lease renewal and the fingerprints load where the store, the options
 * or a handler ask for them.
 */

function runApps(): Promise<LoadingReport[]> {
  const child = forkTs(join(__dirname, 'fixtures', 'record-observers.main.ts'), {});
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  return new Promise((resolve, reject) => {
    let reports: LoadingReport[] | undefined;
    child.on('message', (message: LoadingReport[]) => (reports = message));
    child.once('exit', (code) =>
      code === 0 && reports
        ? resolve(reports)
        : reject(new Error(`the apps exited ${code}: ${stderr.join('')}`)),
    );
  });
}

describe('optional parts load where the app configures them', () => {
  let reports: Map<string, LoadingReport>;
  beforeAll(async () => {
    reports = new Map((await runApps()).map((report) => [report.scenario, report]));
  }, 120_000);

  it('without stats or the Center: no counters, journal, report or metrics, and records still run', () => {
    const plain = reports.get('plain')!;
    expect(plain.statuses).toEqual(['OK', 'DUPLICATE']);
    expect(plain.loaded).toEqual(['observability/idempotency-stats.service.ts']);
  });

  it('tells a reader of IdempotencyStats how to turn the counters on', () => {
    expect(reports.get('stats read without counters')!.stats).toEqual({
      error: {
        name: 'IdempotencyConfigurationError',
        code: 'IDEMPOTENCY_CONFIGURATION',
        message:
          'IdempotencyStats: this app runs no counters. Turn them on with IdempotencyModule.forRoot({ stats: {} }) ' +
          '(a stats store shares them across instances), or import IdempotencyCenterModule.forRoot({ ... }), ' +
          'which turns them on itself.',
      },
    });
  });

  it('loads the store-call batcher for a store with both batch methods, the transactional claim for one that runs transactions', () => {
    const batching = reports.get('batch methods')!;
    expect(batching.statuses).toEqual(['OK', 'DUPLICATE']);
    expect(batching.loaded).toContain('idempotency/store-call-batcher.ts');
    expect(batching.loaded).not.toContain('idempotency/transactional-idempotency.ts');
    expect(reports.get('transactions')!.loaded).toContain('idempotency/transactional-idempotency.ts');
    expect(reports.get('transactions')!.loaded).not.toContain('idempotency/payload-fingerprint.ts');
  });

  it('loads the lease renewal where the module sets heartbeat', () => {
    expect(reports.get('fingerprint')!.loaded).not.toContain('idempotency/lease-heartbeat.ts');
    expect(reports.get('heartbeat')!.loaded).toContain('idempotency/lease-heartbeat.ts');
  });

  it('loads the fingerprints where a handler declares one', () => {
    const fingerprint = reports.get('fingerprint')!;
    expect(fingerprint.statuses).toEqual(['OK', 'DUPLICATE']);
    expect(fingerprint.loaded).toEqual(
      expect.arrayContaining(['idempotency/payload-fingerprint.ts', 'idempotency/fingerprinted-claim.ts']),
    );
    expect(fingerprint.loaded.filter((file) => file.startsWith('observability/'))).toEqual([
      'observability/idempotency-stats.service.ts',
    ]);
  });

  it('with stats: the counters and the report, but no metrics without a meter provider', () => {
    const stats = reports.get('stats')!;
    expect(stats.stats).toEqual({ handled: 1 });
    expect(stats.loaded).toEqual(
      expect.arrayContaining([
        'observability/record-counters.ts',
        'observability/record-journal.ts',
        'observability/idempotency-stats.report.ts',
      ]),
    );
    expect(stats.loaded).not.toContain('observability/record-metrics.ts');
  });

  it('loads the metrics where an SDK registered a global meter provider', () => {
    expect(reports.get('global meter provider')!.loaded).toContain('observability/record-metrics.ts');
  });
});
