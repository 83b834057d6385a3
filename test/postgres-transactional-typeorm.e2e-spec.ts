import { Injectable } from '@nestjs/common';
import { IsString } from 'class-validator';
import { Column, DataSource, Entity, EntityManager, PrimaryGeneratedColumn } from 'typeorm';
import {
  Idempotent,
  IdempotencyTransaction,
  SkipMessageException,
  SqsEvent,
  SqsMessageHandler,
} from '../lib';
import {
  createIdempotencyTable,
  PostgresIdempotencyStore,
  typeOrmTransactions,
} from '../lib/stores/postgres';
import { createTestDatabase, TestDatabase } from './support/postgres-database';
import { requires } from './support/prerequisites';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Transactional handlers through TypeORM (`typeOrmTransactions(dataSource)`), on a real PostgreSQL
 * and a real `DataSource`: the handler writes through the transaction's `EntityManager` as any
 * TypeORM code does, and those writes commit with the completion, or roll back with the claim. A
 * plain handler of the same app settles its claim through the same adapter, outside a transaction.
 */
const postgres = requires('postgres');

@Entity({ name: 'invoices' })
class Invoice {
  @PrimaryGeneratedColumn() id!: number;
  @Column() eventId!: string;
  @Column() customer!: string;
}

@SqsEvent('invoice_requested')
class InvoiceRequested {
  @IsString() id!: string;
  @IsString() customer!: string;
}

@SqsEvent('invoice_viewed')
class InvoiceViewed {
  @IsString() id!: string;
}

const viewed: string[] = [];

@Injectable()
class Invoicing {
  @SqsMessageHandler(InvoiceRequested)
  @Idempotent({ transactional: true })
  async onRequested(
    event: InvoiceRequested,
    @IdempotencyTransaction() manager: EntityManager,
  ): Promise<void> {
    await manager.getRepository(Invoice).insert({ eventId: event.id, customer: event.customer });
    if (event.customer === 'unknown') throw new Error('no such customer');
    if (event.customer === 'opted-out') throw new SkipMessageException('the customer opted out');
  }

  // Not transactional: its claim and completion go through the adapter's plain statements.
  @SqsMessageHandler(InvoiceViewed)
  @Idempotent()
  async onViewed(event: InvoiceViewed): Promise<void> {
    viewed.push(event.id);
  }
}

postgres.describe('Transactional handlers through TypeORM', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let app: TestApp;
  beforeAll(async () => {
    db = await createTestDatabase('typeorm');
    dataSource = new DataSource({ type: 'postgres', url: db.url, entities: [Invoice], synchronize: true });
    await dataSource.initialize();
    await createIdempotencyTable(typeOrmTransactions(dataSource));
    app = await createTestApp({
      idempotency: {
        store: new PostgresIdempotencyStore(typeOrmTransactions(dataSource)),
        service: 'billing',
      },
      providers: [Invoicing],
    });
  });
  afterAll(async () => {
    await app?.close();
    await dataSource?.destroy();
    await db?.drop();
  });

  const invoicesOf = async (eventId: string) =>
    (await dataSource.getRepository(Invoice).findBy({ eventId })).map((invoice) => invoice.customer);
  const completed = async (eventId: string): Promise<boolean | undefined> =>
    (
      (await dataSource.query(`SELECT completed FROM idempotency_keys WHERE key LIKE '%:' || $1`, [
        eventId,
      ])) as {
        completed: boolean;
      }[]
    )[0]?.completed;

  it('commits the entity and the completion together; a copy is a duplicate', async () => {
    const request = { type: 'invoice_requested', id: 'i1', customer: 'acme' };
    expect((await app.sqs.send(request)).status).toBe('OK');
    expect(await invoicesOf('i1')).toEqual(['acme']);
    expect(await completed('i1')).toBe(true);
    expect((await app.sqs.send(request)).status).toBe('DUPLICATE');
    expect(await invoicesOf('i1')).toEqual(['acme']);
  });

  it('rolls back the entity and the claim of a handler that throws', async () => {
    expect((await app.sqs.send({ type: 'invoice_requested', id: 'i2', customer: 'unknown' })).status).toBe(
      'FAILED',
    );
    expect(await invoicesOf('i2')).toEqual([]);
    expect(await completed('i2')).toBeUndefined();
    expect((await app.sqs.send({ type: 'invoice_requested', id: 'i2', customer: 'globex' })).status).toBe(
      'OK',
    );
    expect(await invoicesOf('i2')).toEqual(['globex']);
  });

  it('commits the completion only on a skip', async () => {
    expect((await app.sqs.send({ type: 'invoice_requested', id: 'i3', customer: 'opted-out' })).status).toBe(
      'SKIPPED',
    );
    expect(await invoicesOf('i3')).toEqual([]);
    expect(await completed('i3')).toBe(true);
  });

  it('settles a plain handler through the same adapter, outside any transaction', async () => {
    expect((await app.sqs.send({ type: 'invoice_viewed', id: 'v1' })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'invoice_viewed', id: 'v1' })).status).toBe('DUPLICATE');
    expect(viewed).toEqual(['v1']);
    expect(await completed('v1')).toBe(true);
  });
});
