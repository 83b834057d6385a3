import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { createIdempotencyTable } from '../../../lib/stores/postgres';
import { forkTs } from '../../support/fork-ts';
import { createTestDatabase, TestDatabase } from '../../support/postgres-database';
import { TestQueues } from '../../support/sqs-queues';
import { withDeadline } from '../worker-pool';
import { PG_KILL_LINE, PgChaosCommand, PgChaosWorkerConfig, PgKillPoint } from './pg-chaos-worker.config';

const WORKER_MAIN = join(__dirname, 'pg-chaos-worker.main.ts');

/** The knobs of one Postgres chaos run. */
export interface PgChaosProfile {
  events: number;
  workers: number;
  /** The kill points, in order; one SIGKILL each, between the producer's waves. */
  kills: PgKillPoint[];
  /** Every `duplicateEvery`-th event is sent twice at once (a producer retry: a new message id). */
  duplicateEvery: number;
  /** Every `lateRetryEvery`-th event is sent again once it has completed (a late producer retry). */
  lateRetryEvery: number;
  visibilityTimeout: number;
  inProgressTtl: number;
  timeoutMs: number;
}

export const PG_CHAOS_PROFILE: PgChaosProfile = {
  events: 120,
  workers: 3,
  kills: ['mid-handler', 'after-write', 'mid-handler', 'after-write', 'after-write', 'mid-handler'],
  duplicateEvery: 3,
  lateRetryEvery: 5,
  visibilityTimeout: 1,
  inProgressTtl: 2_000,
  timeoutMs: 300_000,
};

/** What a run saw. */
export interface PgChaosResult {
  mode: PgChaosWorkerConfig['mode'];
  /** Event id → rows in `shipments` (its effect applied that many times). */
  effects: Map<string, number>;
  eventIds: string[];
  /** Each kill line: the worker, the point, the event. */
  kills: string[];
  /** What the controller did when, from the start of the run. */
  timeline: string[];
  messagesSent: number;
  /** Workers that died on their own (not killed by the run): must stay empty. */
  crashes: string[];
  output: string[];
  elapsedMs: number;
}

/**
 * One chaos run on a database of its own: `profile.workers` processes in `mode` consume one fauxqs
 * queue while the producer sends every event, duplicates of some at once and late retries of
 * others, and workers are SIGKILLed at the profile's kill points, each replaced at once. Ends when
 * every event's completion is committed and the queue is drained; then counts each event's rows.
 */
export async function runPostgresChaos(
  mode: PgChaosWorkerConfig['mode'],
  profile: PgChaosProfile,
  sqsConfig: SQSClientConfig,
): Promise<PgChaosResult> {
  const started = performance.now();
  const timeline: string[] = [];
  const mark = (what: string) =>
    timeline.push(`${((performance.now() - started) / 1000).toFixed(1)} s ${what}`);
  const queues = new TestQueues(sqsConfig);
  let db: TestDatabase | undefined;
  let workers: PgWorkerPool | undefined;
  try {
    db = await createTestDatabase(`chaos_${mode}`);
    const pool = db.pool({ max: 3 });
    await createIdempotencyTable(pool);
    // No unique constraint on event_id: a second application of an event shows as a second row.
    await pool.query('CREATE TABLE shipments (event_id text NOT NULL, worker text NOT NULL)');
    const queue = await queues.create(`chaos-pg-${mode}`, { visibilityTimeout: profile.visibilityTimeout });
    workers = new PgWorkerPool({
      mode,
      databaseUrl: db.url,
      queueUrl: queue.url,
      sqsEndpoint: String(sqsConfig.endpoint),
      visibilityTimeout: profile.visibilityTimeout,
      inProgressTtl: profile.inProgressTtl,
    });
    await withDeadline(workers.start(profile.workers), 180_000, 'the workers to start');
    mark('workers ready');
    // From the moment the workers are ready: their start-up (ts-node compiling the library) is not the run.
    const deadline = performance.now() + profile.timeoutMs;
    const check = (what: string) => {
      if (workers!.crashes.length > 0) throw new Error(`worker crashed: ${workers!.crashes.join('; ')}`);
      if (performance.now() > deadline)
        throw new Error(`Postgres chaos run (${mode}) timed out waiting for ${what}`);
    };

    const eventIds = Array.from({ length: profile.events }, (_, i) => `e${String(i).padStart(4, '0')}`);
    const body = (id: string) => ({ type: 'shipment_due', id });
    let messagesSent = 0;
    const send = async (ids: string[]) => {
      for (let i = 0; i < ids.length; i += 10) {
        await queues.sendBatch(queue.url, ids.slice(i, i + 10).map(body));
      }
      messagesSent += ids.length;
    };
    const completedIds = async () =>
      new Set(
        (
          await pool.query<{ id: string }>(
            `SELECT split_part(key, ':', 4) AS id FROM idempotency_keys WHERE completed`,
          )
        ).rows.map((row) => row.id),
      );

    // Waves of events, a kill armed before each wave (so that the wave feeds the doomed worker).
    // On a loaded machine the other workers may take a whole wave before the doomed one polls:
    // then more events go out, 10 at a time, until a handler of the doomed worker reaches its point.
    const waves = profile.kills.length + 1;
    const waveSize = Math.ceil(eventIds.length / waves);
    const unsent = [...eventIds];
    const copiesOf = (ids: string[]) =>
      ids.flatMap((id) => (eventIds.indexOf(id) % profile.duplicateEvery === 0 ? [id, id] : [id]));
    const nextEvents = (count: number) => {
      const ids = unsent.splice(0, count);
      while (ids.length < count) {
        const extra = `x${String(eventIds.length).padStart(4, '0')}`;
        eventIds.push(extra);
        ids.push(extra);
      }
      return ids;
    };
    const kills: string[] = [];
    const lateRetried = new Set<string>();
    for (let wave = 0; wave < waves; wave++) {
      const point = profile.kills[wave];
      const dying = point === undefined ? undefined : workers.arm(wave % profile.workers, point);
      await send(copiesOf(point === undefined ? unsent.splice(0) : nextEvents(waveSize)));
      if (dying !== undefined) {
        let line: string | undefined;
        while ((line = await settledWithin(dying, 3_000)) === undefined) {
          check(`a worker to SIGKILL itself at ${point}`);
          await send(copiesOf(nextEvents(10)));
        }
        kills.push(line);
      }
      // Late retries of events completed so far: copies that meet a committed completion.
      const done = await completedIds();
      const late = eventIds.filter(
        (id, i) => i % profile.lateRetryEvery === 0 && done.has(id) && !lateRetried.has(id),
      );
      late.forEach((id) => lateRetried.add(id));
      await send(late);
      mark(`wave ${wave + 1} sent${point ? `, killed at ${point}` : ''}`);
    }

    for (;;) {
      check('every event completed and the queue drained');
      const done = await completedIds();
      if (eventIds.every((id) => done.has(id)) && (await queues.depth(queue.url)) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    mark('every event completed, queue drained');
    await workers.stop();
    mark('workers stopped');

    const effects = new Map<string, number>();
    const { rows } = await pool.query<{ event_id: string; n: string }>(
      'SELECT event_id, count(*) AS n FROM shipments GROUP BY event_id',
    );
    for (const row of rows) effects.set(row.event_id, Number(row.n));
    return {
      mode,
      effects,
      eventIds,
      kills,
      timeline,
      messagesSent,
      crashes: workers.crashes,
      output: workers.output,
      elapsedMs: performance.now() - started,
    };
  } finally {
    workers?.killAll();
    await queues.deleteAll();
    await db?.drop();
  }
}

/** `work`'s value if it settles within `ms`, else `undefined` (a rejection goes out as it is). */
async function settledWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([work, waited]);
  } finally {
    clearTimeout(timer);
  }
}

interface PgWorker {
  name: string;
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<NodeJS.Signals | null>;
  expectedExit: boolean;
}

/** The worker processes of a run, one per slot; a killed one is replaced in its slot at once. */
class PgWorkerPool {
  readonly output: string[] = [];
  readonly crashes: string[] = [];
  private readonly live = new Map<number, PgWorker>();
  private started = 0;

  constructor(private readonly settings: Omit<PgChaosWorkerConfig, 'name'>) {}

  async start(size: number): Promise<void> {
    await Promise.all(Array.from({ length: size }, (_, slot) => this.spawn(slot).ready));
  }

  /**
   * Tells the worker of `slot` to die at `point`; resolves with its kill line once it died of
   * SIGKILL, after starting its successor.
   */
  async arm(slot: number, point: PgKillPoint): Promise<string> {
    const worker = this.live.get(slot)!;
    // A successor started by the previous kill listens for commands only once it is ready.
    await withDeadline(worker.ready, 180_000, `${worker.name} to be ready`);
    worker.expectedExit = true;
    worker.child.send({ type: 'die', at: point } satisfies PgChaosCommand);
    const signal = await worker.exited;
    if (signal !== 'SIGKILL') throw new Error(`${worker.name} exited with ${signal}, not SIGKILL`);
    const line = this.output.find(
      (text) => text.startsWith(`[${worker.name}]`) && text.includes(PG_KILL_LINE),
    );
    if (!line) throw new Error(`${worker.name} died without its kill line`);
    this.spawn(slot);
    return line;
  }

  async stop(): Promise<void> {
    const workers = [...this.live.values()];
    for (const worker of workers) {
      worker.expectedExit = true;
      if (worker.child.connected) worker.child.send({ type: 'stop' } satisfies PgChaosCommand);
    }
    await Promise.all(
      workers.map((worker) =>
        withDeadline(worker.exited, 20_000, `${worker.name} to stop`).catch(() => {
          worker.child.kill('SIGKILL');
          return worker.exited;
        }),
      ),
    );
  }

  killAll(): void {
    for (const worker of this.live.values()) {
      worker.expectedExit = true;
      worker.child.kill('SIGKILL');
    }
  }

  private spawn(slot: number): PgWorker {
    const name = `w${slot}#${++this.started}`;
    const child = forkTs(WORKER_MAIN, { CHAOS_PG_WORKER: JSON.stringify({ ...this.settings, name }) });
    let markReady!: () => void;
    const worker: PgWorker = {
      name,
      child,
      ready: new Promise<void>((resolve) => (markReady = resolve)),
      exited: new Promise((resolve) => child.once('close', (_code, signal) => resolve(signal))),
      expectedExit: false,
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.output.push(`[${name}] ${line}`));
    }
    child.on('message', (report: { type?: string }) => {
      if (report.type === 'ready') markReady();
    });
    void worker.exited.then((signal) => {
      if (this.live.get(slot) === worker) this.live.delete(slot);
      if (!worker.expectedExit) this.crashes.push(`${name} exited (signal ${signal})`);
    });
    this.live.set(slot, worker);
    return worker;
  }
}
