import type { ChaosRunResult } from './run-chaos';

/** The counts a chaos run checked, as the spec prints them. */
export function chaosReport(result: ChaosRunResult): string {
  const { profile, sent, workers } = result;
  const counts = [...result.ledger.values()];
  const ledgerSum = counts.reduce((sum, count) => sum + count, 0);
  const rows: Array<[string, string | number]> = [
    ['profile', `${profile.name} (seed ${profile.seed}, ${profile.workers} workers)`],
    ['logical events', profile.events],
    ['messages sent', sent.messages],
    ['  first copies', sent.firstCopies],
    ['  producer retries, new message id, at once', sent.inFlightRetries],
    ['  producer retries, new message id, after completion', sent.lateRetries],
    ['  burst copies', `${sent.burstCopies} (${profile.bursts} x ${profile.burstCopies})`],
    ['  poison (DLQ expected)', sent.poison],
    ['deliveries to the handler (claims attempted)', workers.deliveries],
    ['effects applied', workers.applied],
    ['duplicates acked (COMPLETED)', workers.duplicatesAcked],
    ['in-flight duplicates (IN_PROGRESS, redelivered)', workers.inFlightDuplicates],
    ['transient failures (redelivered)', workers.transientFailures],
    ['poison attempts failed', workers.poisonFailures],
    ['invalid records rejected', workers.invalid],
    ['records failed closed (store paused)', workers.storeErrors],
    [
      'highest receive count of an applied event',
      `${workers.maxReceiveCountApplied} (dead-lettered after ${profile.maxReceiveCount})`,
    ],
    ['workers SIGKILLed mid-handler (restarted)', result.kills.length],
    ['worker processes started', result.processesStarted],
    ['store Redis paused', result.pause ? `${result.pause.ms} ms (SIGSTOP/SIGCONT)` : 'no'],
    ['lost-claim warnings', result.lostClaimLogs],
    ['dead-lettered', result.deadLettered.length],
    ['ledger: events applied', result.ledger.size],
    ['ledger: sum of applications', ledgerSum],
    ['ledger: applied more than once', counts.filter((count) => count > 1).length],
    ['queue depth at the last two checks', result.finalDepths.join(', ')],
    ['elapsed', `${(result.elapsedMs / 1000).toFixed(1)} s`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    'Chaos run (counts from workers are lower bounds: a killed worker loses its last 250 ms):',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    'Timeline:',
    ...result.timeline.map((line) => `  ${line}`),
  ].join('\n');
}
