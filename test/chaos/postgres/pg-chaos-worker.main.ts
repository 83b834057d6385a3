/**
 * One worker process of the Postgres chaos run (started by PgWorkerPool through ts-node): polls the
 * queue with SqsModule, claims on PostgresIdempotencyStore, and writes one `shipments` row per
 * handled event, in the mode it was told. On `die` it SIGKILLs itself at the kill point it was
 * given, in the next handler call that reaches it (see PgKillPoint).
 */
import 'reflect-metadata';
import { writeSync } from 'node:fs';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsString } from 'class-validator';
import { Pool, PoolClient } from 'pg';
import {
  Idempotent,
  IdempotencyModule,
  IdempotencyTransaction,
  SqsBatchContext,
  SqsBatchHandler,
  SqsEvent,
  SqsMessageHandler,
} from '../../../lib';
import { pgTransactions, PostgresIdempotencyStore } from '../../../lib/stores/postgres';
import { chaosSqsModule } from '../chaos-sqs-module';
import {
  PG_KILL_LINE,
  PgChaosCommand,
  PgChaosReport,
  PgChaosWorkerConfig,
  PgKillPoint,
} from './pg-chaos-worker.config';

const config = JSON.parse(process.env.CHAOS_PG_WORKER ?? '') as PgChaosWorkerConfig;
let armed: PgKillPoint | undefined;

/** SIGKILLs the process here if it was told to die at `point`: synchronous, nothing runs after it. */
function killPoint(point: PgKillPoint, what: string): void {
  if (armed !== point) return;
  writeSync(2, `${PG_KILL_LINE} pid=${process.pid} at=${point} ${what}\n`);
  process.kill(process.pid, 'SIGKILL');
}

const pool = new Pool({ connectionString: config.databaseUrl, max: 12 });
pool.on('error', () => undefined);

/**
 * The store's transactions on `pool`, with a kill point right before each COMMIT: the handler has
 * resolved, its row is written inside the transaction, and nothing is committed yet.
 */
const hooked = new WeakSet<PoolClient>();
const transactions = pgTransactions({
  query: (statement) => pool.query(statement) as never,
  async connect() {
    const client = await pool.connect();
    if (!hooked.has(client)) {
      hooked.add(client);
      // Every call goes through (the pool's own use of the client passes values and a callback).
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
        if ((args[0] as { text?: string } | undefined)?.text === 'COMMIT') {
          killPoint('after-write', 'before COMMIT');
        }
        return query(...args);
      };
    }
    return client;
  },
});

@SqsEvent('shipment_due')
class ShipmentDue {
  @IsString() id!: string;
}

@Injectable()
class TransactionalShipping {
  @SqsMessageHandler(ShipmentDue)
  @Idempotent({ transactional: true })
  async ship(event: ShipmentDue, @IdempotencyTransaction() tx: PoolClient): Promise<void> {
    killPoint('mid-handler', `event=${event.id}`);
    await tx.query('INSERT INTO shipments (event_id, worker) VALUES ($1, $2)', [event.id, config.name]);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

@Injectable()
class BatchShipping {
  @SqsBatchHandler(ShipmentDue)
  @Idempotent({ transactional: true })
  async ship(events: ShipmentDue[], batch: SqsBatchContext): Promise<void> {
    killPoint('mid-handler', `event=${events[0].id} (a batch of ${events.length})`);
    await (batch.transaction as PoolClient).query(
      'INSERT INTO shipments (event_id, worker) SELECT id, $2 FROM unnest($1::text[]) AS id',
      [events.map((event) => event.id), config.name],
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

@Injectable()
class PlainShipping {
  @SqsMessageHandler(ShipmentDue)
  @Idempotent()
  async ship(event: ShipmentDue): Promise<void> {
    killPoint('mid-handler', `event=${event.id}`);
    // Its own connection, committed at once: the effect as most handlers write it today.
    await pool.query('INSERT INTO shipments (event_id, worker) VALUES ($1, $2)', [event.id, config.name]);
    killPoint('after-write', `event=${event.id} (effect committed, completion not)`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

@Module({
  imports: [
    IdempotencyModule.forRoot({
      store: new PostgresIdempotencyStore(config.mode === 'plain' ? pool : transactions, {
        sweeper: false,
      }),
      service: 'chaos-pg',
      inProgressTtl: config.inProgressTtl,
      ttl: 3_600_000,
    }),
    chaosSqsModule('shipments', config),
  ],
  providers: [
    { transactional: TransactionalShipping, plain: PlainShipping, batch: BatchShipping }[config.mode],
  ],
})
class PgChaosWorkerModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(PgChaosWorkerModule, { logger: ['error'] });
  process.on('message', (command: PgChaosCommand) => {
    if (command.type === 'die') armed = command.at;
    else void app.close().finally(() => pool.end().finally(() => process.exit(0)));
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready' } satisfies PgChaosReport);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
