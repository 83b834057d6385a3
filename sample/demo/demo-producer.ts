import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { seededRandom } from './seeded-random';

/** One order of the burst, and which kinds of duplicate and trouble it gets. */
export interface OrderPlan {
  body: { type: 'order_created'; id: string; orderId: string; amount: number };
  /** Shipping it outlasts the visibility timeout: SQS redelivers it while the first attempt runs. */
  slow: boolean;
  /** The warehouse is busy on the first attempt: the handler throws, SQS redelivers. */
  transientFailure: boolean;
  /** A second copy is sent in the same batch, so both are in flight at once. */
  concurrentCopy: boolean;
  /** The producer sends it again later, as a new message (new messageId, same event id). */
  producerRetry: boolean;
}

/** Shares of the orders that get each treatment (at least one order each). */
const SHARES = { slow: 0.05, transientFailure: 0.06, concurrentCopy: 0.15, producerRetry: 0.2 };

/** A reproducible plan: the same seed gives the same orders, troubles and duplicates. */
export function planOrders(count: number, runId: string, seed: number): OrderPlan[] {
  const random = seededRandom(seed);
  const plans: OrderPlan[] = Array.from({ length: count }, (_, n) => ({
    body: {
      type: 'order_created',
      id: `evt-${runId}-${n}`,
      orderId: `order-${n}`,
      amount: 1 + Math.floor(random() * 99),
    },
    slow: false,
    transientFailure: false,
    concurrentCopy: false,
    producerRetry: false,
  }));
  for (const [kind, share] of Object.entries(SHARES) as Array<[keyof typeof SHARES, number]>) {
    const indexes = shuffle([...plans.keys()], random).slice(0, Math.max(1, Math.round(count * share)));
    for (const index of indexes) plans[index][kind] = true;
  }
  return plans;
}

/** Sends the burst: originals with their concurrent copies, then the producer's retries. */
export class DemoProducer {
  readonly sent = { originals: 0, concurrentCopies: 0, producerRetries: 0 };

  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  get total(): number {
    return this.sent.originals + this.sent.concurrentCopies + this.sent.producerRetries;
  }

  /** Every order once, a concurrent copy right next to some, in batches of 10. */
  async sendBurst(plans: readonly OrderPlan[]): Promise<void> {
    const bodies: object[] = [];
    for (const plan of plans) {
      bodies.push(plan.body);
      if (plan.concurrentCopy) bodies.push(plan.body);
    }
    await this.sendAll(bodies);
    this.sent.originals += plans.length;
    this.sent.concurrentCopies += plans.filter((plan) => plan.concurrentCopy).length;
  }

  /** The producer's retries: the same events again, as new messages. */
  async sendRetries(plans: readonly OrderPlan[]): Promise<void> {
    const retries = plans.filter((plan) => plan.producerRetry).map((plan) => plan.body);
    await this.sendAll(retries);
    this.sent.producerRetries += retries.length;
  }

  private async sendAll(bodies: readonly object[]): Promise<void> {
    for (let i = 0; i < bodies.length; i += 10) {
      const entries = bodies
        .slice(i, i + 10)
        .map((body, index) => ({ Id: String(index), MessageBody: JSON.stringify(body) }));
      const { Failed } = await this.client.send(
        new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }),
      );
      if (Failed?.length) throw new Error(`SendMessageBatch failed: ${JSON.stringify(Failed)}`);
    }
  }
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}
