import { SqsTestClient } from '../../lib/testing';
import { deferred, OrdersLedger, orderCreated } from '../fixtures/orders.fixture';
import { waitFor } from './wait-for';

/** One instance of the orders app (test/fixtures/orders.fixture.ts): how to send to it, what it ran. */
export interface OrdersInstance {
  sqs: SqsTestClient;
  ledger: OrdersLedger;
}

/**
 * What a shared store is for, asserted on two instances of one service (ids `e1`-`e3` must be new to
 * the store): an event handled by one is a duplicate for the other, an event in flight on one is
 * IN_PROGRESS on the other, and a failure releases the claim so that the other's redelivery runs it.
 * Each handler ran exactly once per run that counted (four in all).
 */
export async function expectInstancesShareClaims(a: OrdersInstance, b: OrdersInstance): Promise<void> {
  expect((await a.sqs.send(orderCreated('e1'))).status).toBe('OK');
  expect((await b.sqs.send(orderCreated('e1'))).status).toBe('DUPLICATE');

  const slow = deferred();
  a.ledger.script.set('order-e2', slow.promise);
  const callsBefore = a.ledger.calls;
  const first = a.sqs.send(orderCreated('e2'));
  // The handler runs only after the claim: once it is called, the key is held in the store.
  await waitFor(() => a.ledger.calls > callsBefore, 30_000, 'instance a to claim e2 and call its handler');
  expect((await b.sqs.send(orderCreated('e2'))).status).toBe('IN_PROGRESS');
  slow.resolve();
  expect((await first).status).toBe('OK');
  expect((await b.sqs.send(orderCreated('e2'))).status).toBe('DUPLICATE');

  a.ledger.script.set('order-e3', 'fail');
  expect((await a.sqs.send(orderCreated('e3'))).status).toBe('FAILED');
  expect((await b.sqs.send(orderCreated('e3'))).status).toBe('OK');
  expect(a.ledger.calls + b.ledger.calls).toBe(4);
}
