/**
 * Entry point of one chaos worker process (started by WorkerPool with ts-node, transpile-only, as
 * `npm start` runs the demo). It runs the worker app until told to stop, reports its counters over
 * IPC, and on `die` lets EffectWindow pick the moment to SIGKILL itself.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ChaosStats } from './chaos-stats';
import { ChaosWorkerCommand, ChaosWorkerConfig, ChaosWorkerReport } from './chaos-worker.config';
import { ChaosWorkerModule } from './chaos-worker.module';
import { EffectWindow } from './effect-window';

const REPORT_EVERY_MS = 250;

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CHAOS_WORKER ?? '') as ChaosWorkerConfig;
  const report = (message: ChaosWorkerReport) => process.send?.(message);
  const app = await NestFactory.createApplicationContext(ChaosWorkerModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  const stats = app.get(ChaosStats);
  const window = app.get(EffectWindow);
  const reporting = setInterval(() => report({ type: 'stats', stats: stats.counts }), REPORT_EVERY_MS);

  process.on('message', (command: ChaosWorkerCommand) => {
    if (command.type === 'die') {
      window.arm();
    } else if (command.type === 'stop') {
      clearInterval(reporting);
      // A graceful stop: in-flight batches finish and are acked, then the final counts go out.
      void app
        .close()
        .finally(() =>
          process.send!({ type: 'stats', stats: stats.counts } satisfies ChaosWorkerReport, () =>
            process.exit(0),
          ),
        );
    }
  });
  // The controller going away (a failed test) must not leave workers behind.
  process.on('disconnect', () => process.exit(0));
  report({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
