import { chaosProfile } from './chaos/chaos-profile';
import { chaosReport } from './chaos/chaos-report';
import { runChaos } from './chaos/run-chaos';
import { FAN_OUT_PROFILE, FAN_OUT_SERVICES, runFanOut } from './chaos/run-fan-out';
import { runShortLease } from './chaos/run-short-lease';
import { fauxqsClientConfig } from './support/sqs-queues';
import { requires } from './support/prerequisites';

const withRedis = requires('redis-server');

/**
 * The reliability proof: real fauxqs, real Redis, real worker processes consuming one queue, while
 * the producer duplicates events in every way, workers are SIGKILLed mid-handler and the store's
 * Redis hangs. Afterwards every event was applied exactly once, the queue is drained, and the
 * dead-letter queue holds exactly the poison messages. The short profile runs in `npm test`;
 * `npm run test:chaos` runs the long one (test/chaos/chaos-profile.ts lists the knobs).
 */
const profile = chaosProfile();

withRedis.describe(`chaos run (${profile.name} profile: ${profile.events} events)`, () => {
  it(
    'applies every event exactly once through kills, a store hang, redeliveries and producer retries',
    async () => {
      const result = await runChaos(profile, fauxqsClientConfig());
      console.log(chaosReport(result));

      expect(result.crashes).toEqual([]);
      // The ledger: every event exactly once (no 0, no 2), and nothing else (no poison applied).
      const expected = new Set(result.plan.events.map((event) => event.id));
      const wrong = [...expected].filter((id) => result.ledger.get(id) !== 1);
      expect(wrong.map((id) => `${id}: ${result.ledger.get(id) ?? 0}`)).toEqual([]);
      expect([...result.ledger.keys()].filter((id) => !expected.has(id))).toEqual([]);
      expect([...result.ledger.values()].reduce((sum, count) => sum + count, 0)).toBe(profile.events);
      // Drained, and the DLQ holds exactly the poison messages, each once.
      expect(result.finalDepths).toEqual([0, 0]);
      expect([...result.deadLettered].sort()).toEqual(result.plan.poison.map(({ body }) => body).sort());
      // The chaos really happened: kills mid-handler, the pause, and duplicates of every kind.
      expect(result.kills).toHaveLength(profile.kills);
      for (const line of result.kills) expect(line).toMatch(/handlersInFlight=[1-9]/);
      expect(result.pause).toBeDefined();
      expect(result.workers.storeErrors).toBeGreaterThan(0);
      expect(result.workers.duplicatesAcked).toBeGreaterThan(0);
      expect(result.workers.inFlightDuplicates).toBeGreaterThan(0);
      expect(result.workers.transientFailures).toBeGreaterThan(0);
      expect(result.sent.inFlightRetries + result.sent.lateRetries).toBeGreaterThanOrEqual(
        profile.events * 0.2,
      );
    },
    profile.timeoutMs + 360_000, // the workers' start-up, then the run
  );

  it(
    'two services consuming one fan-out on one Redis each apply every event exactly once',
    async () => {
      const result = await runFanOut(FAN_OUT_PROFILE, fauxqsClientConfig());
      expect(result.crashes).toEqual([]);
      expect(result.services.map(({ service }) => service)).toEqual([...FAN_OUT_SERVICES]);
      for (const { service, ledger, kill, duplicatesAcked, depths } of result.services) {
        const wrong = result.eventIds.filter((id) => ledger.get(id) !== 1);
        expect({ service, wrong: wrong.map((id) => `${id}: ${ledger.get(id) ?? 0}`) }).toEqual({
          service,
          wrong: [],
        });
        expect(ledger.size).toBe(result.eventIds.length);
        expect({ service, depths }).toEqual({ service, depths: { queue: 0, dlq: 0 } });
        // The chaos happened to each service: a kill mid-handler, and duplicates caught.
        expect(kill).toMatch(/handlersInFlight=[1-9]/);
        expect(duplicatesAcked).toBeGreaterThan(0);
      }
      expect(result.messagesSentPerQueue).toBeGreaterThan(result.eventIds.length);
    },
    FAN_OUT_PROFILE.timeoutMs + 360_000, // the workers' start-up, then the run
  );

  it('with the heartbeat off and a lease shorter than the handler, applies an event twice and logs the lost claim', async () => {
    // The misconfiguration the README warns about (inProgressTtl must exceed the handler time).
    const { ledger, lostClaimLogs } = await runShortLease(fauxqsClientConfig());
    expect(Math.max(...ledger.values())).toBeGreaterThanOrEqual(2);
    expect(lostClaimLogs[0]).toMatch(
      /Lost the claim on ".*" .*Raise inProgressTtl above the worst-case handler time/,
    );
  }, 360_000); // the workers' start-up, then the run
});
