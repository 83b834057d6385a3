import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { forkTs } from '../support/fork-ts';
import {
  ChaosWorkerCommand,
  ChaosWorkerConfig,
  ChaosWorkerReport,
  ChaosWorkerStats,
  KILL_LINE,
  NO_STATS,
} from './chaos-worker.config';

const WORKER_MAIN = join(__dirname, 'chaos-worker.main.ts');
/** Each worker compiles the library with ts-node as it starts: minutes on a loaded 2-core machine. */
const WORKER_START_TIMEOUT_MS = 300_000;

/** The settings every worker shares; the pool adds each one's name and seed. */
export type ChaosWorkerSettings = Omit<ChaosWorkerConfig, 'name' | 'seed'>;

interface Worker {
  slot: number;
  name: string;
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  isReady: boolean;
  /** Set when the pool itself kills or stops it: any other exit is a crash the run reports. */
  expectedExit: boolean;
  stats: ChaosWorkerStats;
}

/**
 * The worker processes of a chaos run, one per slot: starts them, kills one on request and starts
 * its successor in the same slot, keeps their output and their last reported counters.
 */
export class WorkerPool {
  /** Every line the workers wrote, prefixed with the worker's name. */
  readonly output: string[] = [];
  /** Workers that exited on their own (a crash): must stay empty. */
  readonly crashes: string[] = [];
  private readonly all: Worker[] = [];
  private readonly live = new Map<number, Worker>();
  private generation = 0;

  constructor(
    private readonly settings: ChaosWorkerSettings,
    private readonly seed: number,
    private readonly size: number,
  ) {}

  /** Starts every slot and waits until each consumes. */
  async start(timeoutMs = WORKER_START_TIMEOUT_MS): Promise<void> {
    const workers = Array.from({ length: this.size }, (_, slot) => this.spawn(slot));
    await withDeadline(Promise.all(workers.map((worker) => worker.ready)), timeoutMs, 'the workers to start');
  }

  /** Slots whose worker is up and consuming. */
  readySlots(): number[] {
    return [...this.live.values()].filter((worker) => worker.isReady).map((worker) => worker.slot);
  }

  /**
   * Has the worker of `slot` SIGKILL itself mid-handler (see EffectWindow), checks that it died of
   * SIGKILL, and starts its successor (not waiting for it to be ready). Returns the kill line.
   */
  async kill(slot: number, timeoutMs = 30_000): Promise<string> {
    const worker = this.live.get(slot);
    if (!worker) throw new Error(`no worker in slot ${slot}`);
    worker.expectedExit = true;
    this.send(worker, { type: 'die' });
    const { signal } = await withDeadline(worker.exited, timeoutMs, `${worker.name} to kill itself`);
    if (signal !== 'SIGKILL') throw new Error(`${worker.name} exited with ${signal}, not SIGKILL`);
    const line = this.output.find((text) => text.startsWith(`[${worker.name}]`) && text.includes(KILL_LINE));
    if (!line) throw new Error(`${worker.name} died without writing its kill line`);
    this.spawn(slot);
    return line;
  }

  /** The counters of every worker that ran, summed (killed ones: up to their last report). */
  stats(): ChaosWorkerStats {
    const total = { ...NO_STATS };
    for (const worker of this.all) {
      for (const name of Object.keys(total) as Array<keyof ChaosWorkerStats>) {
        total[name] =
          name === 'maxReceiveCountApplied'
            ? Math.max(total[name], worker.stats[name])
            : total[name] + worker.stats[name];
      }
    }
    return total;
  }

  /** Processes started, restarts included. */
  get started(): number {
    return this.all.length;
  }

  /** Stops every live worker gracefully (SIGKILL after the deadline). */
  async stop(timeoutMs = 20_000): Promise<void> {
    const workers = [...this.live.values()];
    for (const worker of workers) {
      worker.expectedExit = true;
      this.send(worker, { type: 'stop' });
    }
    await Promise.all(
      workers.map((worker) =>
        withDeadline(worker.exited, timeoutMs, `${worker.name} to stop`).catch(() => {
          worker.child.kill('SIGKILL');
          return worker.exited;
        }),
      ),
    );
  }

  /** For a failed test: whatever still runs dies now. */
  killAll(): void {
    for (const worker of this.live.values()) {
      worker.expectedExit = true;
      worker.child.kill('SIGKILL');
    }
  }

  private spawn(slot: number): Worker {
    const name = `w${slot}#${this.all.filter((worker) => worker.slot === slot).length + 1}`;
    const config: ChaosWorkerConfig = { ...this.settings, name, seed: this.seed * 1_000 + ++this.generation };
    const child = forkTs(WORKER_MAIN, { CHAOS_WORKER: JSON.stringify(config) });
    let markReady!: () => void;
    const worker: Worker = {
      slot,
      name,
      child,
      ready: new Promise<void>((resolve) => (markReady = resolve)),
      // 'close', not 'exit': by then the worker's output (its kill line) has been read.
      exited: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))),
      isReady: false,
      expectedExit: false,
      stats: { ...NO_STATS },
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.output.push(`[${name}] ${line}`));
    }
    child.on('message', (report: ChaosWorkerReport) => {
      if (report.type === 'ready') {
        worker.isReady = true;
        markReady();
      } else if (report.type === 'stats') {
        worker.stats = report.stats;
      }
    });
    void worker.exited.then(({ code, signal }) => {
      if (this.live.get(slot) === worker) this.live.delete(slot);
      if (!worker.expectedExit) this.crashes.push(`${name} exited (code ${code}, signal ${signal})`);
    });
    this.all.push(worker);
    this.live.set(slot, worker);
    return worker;
  }

  private send(worker: Worker, command: ChaosWorkerCommand): void {
    if (worker.child.connected) worker.child.send(command);
  }
}

/** `work`, or a rejection naming `what` after `timeoutMs`. */
export async function withDeadline<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
