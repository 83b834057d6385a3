import { chaosEventBody } from './chaos-event';
import type { ChaosProfile } from './chaos-profile';
import { seededRandom } from '../../sample/demo/seeded-random';

/** One logical event of the run, and the duplicates the producer makes of it. */
export interface PlannedEvent {
  id: string;
  body: string;
  /** A producer retry (same event, new message id): sent right after the first copy, or once applied. */
  retry?: 'in-flight' | 'late';
  /** Sent as a burst of concurrent copies. */
  burst?: boolean;
}

/** A message that must end in the dead-letter queue exactly once, never applied. */
export interface PoisonMessage {
  body: string;
  /** The ledger field it would have written, had it been applied (none for undecodable bodies). */
  id?: string;
}

export interface ChaosPlan {
  events: PlannedEvent[];
  poison: PoisonMessage[];
}

/**
 * What the producer sends, from the profile's seed: handler times (most short, some longer than the
 * visibility timeout so SQS redelivers them while they run), producer retries, bursts and poison.
 */
export function planChaos(profile: ChaosProfile, runId: string): ChaosPlan {
  const random = seededRandom(profile.seed);
  const slow = profile.slowHandlerMs;
  const events: PlannedEvent[] = [];
  for (let n = 0; n < profile.events; n++) {
    const roll = random();
    const workMs =
      roll < 0.01
        ? slow.min + Math.floor(random() * (slow.max - slow.min)) // outlives the visibility timeout
        : roll < 0.1
          ? 20 + Math.floor(random() * 280)
          : Math.floor(random() * 20);
    const id = `${runId}-e${n}`;
    const retryRoll = random();
    events.push({
      id,
      body: chaosEventBody({ id, workMs }),
      retry:
        retryRoll < profile.retryShare / 2
          ? 'in-flight'
          : retryRoll < profile.retryShare
            ? 'late'
            : undefined,
    });
  }
  // Bursts: spread over the run, never an event that is also retried (its copies are counted apart).
  for (let b = 0; b < profile.bursts; b++) {
    const event = events[Math.floor(((b + 0.5) / profile.bursts) * events.length)];
    event.burst = true;
    event.retry = undefined;
  }
  const poison: PoisonMessage[] = [];
  for (let n = 0; n < profile.poisonEvents; n++) {
    const id = `${runId}-poison${n}`;
    poison.push({ id, body: chaosEventBody({ id, workMs: Math.floor(random() * 50), poison: true }) });
  }
  const undecodable = [
    (n: number) => `not json ${runId}-invalid${n}`,
    (n: number) => JSON.stringify({ type: 'chaos_event', id: `${runId}-invalid${n}`, workMs: 'slow' }),
    (n: number) => JSON.stringify({ type: 'chaos_unknown', id: `${runId}-invalid${n}` }),
    (n: number) => JSON.stringify([{ type: 'chaos_event', id: `${runId}-invalid${n}`, workMs: 1 }]),
  ];
  for (let n = 0; n < profile.invalidBodies; n++) {
    poison.push({ body: undecodable[n % undecodable.length](n) });
  }
  return { events, poison };
}
