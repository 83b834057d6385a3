import { fauxqsClientConfig } from './support/sqs-queues';
import { requires } from './support/prerequisites';
import { PG_CHAOS_PROFILE, PgChaosResult, runPostgresChaos } from './chaos/postgres/run-postgres-chaos';

/**
 * The proof of transactional handlers (issue 18): worker processes on fauxqs and a real PostgreSQL,
 * SIGKILLed mid-handler and between the handler's write and the commit, with producer duplicates
 * and late retries. In transactional mode every event's effect row exists exactly once. The same
 * run in plain mode (same store, the effect committed on its own connection, then `markComplete`)
 * applies events twice when a kill lands between the two: the window the README describes.
 */
const postgres = requires('postgres');
const profile = PG_CHAOS_PROFILE;

/** Event id → effect rows, for the events whose count is not `expected`. */
const countsOtherThan = (result: PgChaosResult, expected: number) =>
  result.eventIds
    .filter((id) => (result.effects.get(id) ?? 0) !== expected)
    .map((id) => `${id}: ${result.effects.get(id) ?? 0}`);

const summary = (result: PgChaosResult) =>
  [
    `${result.mode}: ${result.eventIds.length} events, ${result.messagesSent} messages, ` +
      `${result.kills.length} kills, ${(result.elapsedMs / 1000).toFixed(1)} s`,
    ...result.kills.map((line) => `  ${line}`),
    ...result.timeline.map((line) => `  ${line}`),
    `  events applied twice or more: ${countsOtherThan(result, 1).join(', ') || 'none'}`,
  ].join('\n');

postgres.describe(`Postgres chaos run (${profile.events} events, ${profile.kills.length} kills)`, () => {
  it(
    'transactional mode: every event applied exactly once through kills mid-handler and before the commit',
    async () => {
      const result = await runPostgresChaos('transactional', profile, fauxqsClientConfig());
      console.log(summary(result));
      expect(result.crashes).toEqual([]);
      expect(countsOtherThan(result, 1)).toEqual([]);
      expect([...result.effects.keys()].filter((id) => !result.eventIds.includes(id))).toEqual([]);
      // The chaos happened: each planned kill, at its point, and duplicates were sent.
      expect(result.kills.map((line) => /at=(\S+)/.exec(line)?.[1])).toEqual(profile.kills);
      expect(result.kills.filter((line) => line.includes('before COMMIT')).length).toBe(
        profile.kills.filter((point) => point === 'after-write').length,
      );
      expect(result.messagesSent).toBeGreaterThan(profile.events);
    },
    profile.timeoutMs + 360_000, // the workers' start-up, then the run
  );

  it(
    'transactional batch handlers (issue 53): every event applied exactly once through kills mid-call and before the commit',
    async () => {
      const result = await runPostgresChaos('batch', profile, fauxqsClientConfig());
      console.log(summary(result));
      expect(result.crashes).toEqual([]);
      expect(countsOtherThan(result, 1)).toEqual([]);
      expect([...result.effects.keys()].filter((id) => !result.eventIds.includes(id))).toEqual([]);
      expect(result.kills.map((line) => /at=(\S+)/.exec(line)?.[1])).toEqual(profile.kills);
      expect(result.kills.filter((line) => line.includes('before COMMIT')).length).toBe(
        profile.kills.filter((point) => point === 'after-write').length,
      );
      expect(result.messagesSent).toBeGreaterThan(profile.events);
    },
    profile.timeoutMs + 360_000,
  );

  it(
    'plain mode, same run: a kill between the committed effect and markComplete applies the event again',
    async () => {
      const result = await runPostgresChaos('plain', profile, fauxqsClientConfig());
      console.log(summary(result));
      expect(result.crashes).toEqual([]);
      expect(result.kills.map((line) => /at=(\S+)/.exec(line)?.[1])).toEqual(profile.kills);
      // Never lost: every event applied at least once.
      expect(countsOtherThan(result, 0).length).toBe(result.eventIds.length);
      // The window: each kill after the effect's commit left an event that ran again after the lease.
      const twice = result.eventIds.filter((id) => (result.effects.get(id) ?? 0) >= 2);
      expect(twice.length).toBeGreaterThanOrEqual(1);
      // Each such kill left one committed row behind, and the attempt that finally completed added
      // one. At least: an event killed after its write twice (its redelivery met the next kill) has
      // three, and a kill also takes down the other records its worker was running, some of them
      // past their own write.
      const killsAfterWrite = new Map<string, number>();
      for (const line of result.kills.filter((text) => text.includes('at=after-write'))) {
        const id = /event=(\S+)/.exec(line)![1];
        killsAfterWrite.set(id, (killsAfterWrite.get(id) ?? 0) + 1);
      }
      for (const [id, kills] of killsAfterWrite) {
        expect(result.effects.get(id) ?? 0).toBeGreaterThanOrEqual(kills + 1);
      }
    },
    profile.timeoutMs + 360_000, // the workers' start-up, then the run
  );
});
