import { join } from 'node:path';
import type { ClaimerConfig, ClaimerMessage, ClaimerTally } from './claimer.protocol';
import { forkTs } from '../support/fork-ts';

/** What the claimer processes of one race counted, summed. */
export interface ClaimRaceResult {
  /** Claims made in all: processes × keys × claimers per key. */
  total: number;
  answers: Record<'ACQUIRED' | 'IN_PROGRESS' | 'COMPLETED', number>;
  /** Per key index: ACQUIRED answers over every process (1 each, when the claim is atomic). */
  acquiredPerKey: number[];
  /** Per key index: the token that was told ACQUIRED (the last one, if several were). */
  winners: Array<string | null>;
  /** Keys won by each process. */
  winsPerProcess: number[];
  /** From "go" to the last tally, in ms (process start-up excluded). */
  raceMs: number;
}

/**
 * Runs one claim race (test/concurrency/claimer.main.ts): forks a claimer process per config,
 * waits until every one is connected, tells them all to start at the same wall-clock moment, and
 * sums their tallies. A process that fails fails the race with its stderr.
 */
export async function runClaimRace(configs: ClaimerConfig[]): Promise<ClaimRaceResult> {
  const children = configs.map((config) => {
    const child = forkTs(join(__dirname, 'claimer.main.ts'), { CLAIMER: JSON.stringify(config) });
    const stderr: string[] = [];
    child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
    const messages = new Promise<ClaimerMessage[]>((resolve, reject) => {
      const received: ClaimerMessage[] = [];
      child.on('message', (message: ClaimerMessage) => received.push(message));
      child.once('exit', (code) =>
        code === 0
          ? resolve(received)
          : reject(new Error(`claimer ${config.name} exited ${code}: ${stderr.join('')}`)),
      );
    });
    const ready = new Promise<void>((resolve) =>
      child.on('message', (message: ClaimerMessage) => message.type === 'ready' && resolve()),
    );
    return { child, ready, messages };
  });
  try {
    await Promise.all(children.map(({ ready }) => ready));
    // Every process starts claiming at the same moment.
    const startAt = Date.now() + 200;
    for (const { child } of children) child.send({ startAt });
    const tallies = (await Promise.all(children.map(({ messages }) => messages))).map((messages) =>
      messages.find((message): message is ClaimerTally => message.type === 'tally')!,
    );
    const raceMs = Date.now() - startAt;

    const keys = configs[0].keys;
    const acquiredPerKey = new Array<number>(keys).fill(0);
    const winners = new Array<string | null>(keys).fill(null);
    const answers = { ACQUIRED: 0, IN_PROGRESS: 0, COMPLETED: 0 };
    for (const tally of tallies) {
      tally.acquired.forEach((count, key) => (acquiredPerKey[key] += count));
      tally.winners.forEach((token, key) => token && (winners[key] = token));
      for (const answer of Object.keys(answers) as Array<keyof typeof answers>) {
        answers[answer] += tally.answers[answer];
      }
    }
    return {
      total: configs.reduce((sum, config) => sum + config.keys * config.claimersPerKey, 0),
      answers,
      acquiredPerKey,
      winners,
      winsPerProcess: tallies.map((tally) => tally.acquired.reduce((sum, count) => sum + count, 0)),
      raceMs,
    };
  } finally {
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}
