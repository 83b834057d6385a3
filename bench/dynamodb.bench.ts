import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchCase, formatRate, formatRatio, measureOps, Result, runRounds } from './bench-harness';
import { DynamoDbContender, DynamoDbContenderId, dynamoDbContender } from './bench-dynamodb';
import { newPayload, OrderPayload } from './bench-redis';
import { DynaliteServer, startDynalite, totalRequests } from '../test/support/dynalite';

/**
 * The DynamoDB store beside Powertools' `DynamoDBPersistenceLayer` on one dynalite (run in a
 * process of its own, so that its CPU is not the measured one): records per second and the Node
 * process's CPU per record, unique keys (claim + complete) and repeated ones (duplicates of
 * completed keys), 1 and 32 in flight; and the requests each sends per record, on dynalite and as
 * Amazon DynamoDB answers a failed condition (with the item, `ALL_OLD`).
 */

type KeyMode = 'unique' | 'repeated';
const MODES: KeyMode[] = ['unique', 'repeated'];
const CONTENDERS: DynamoDbContenderId[] = ['a', 'c'];
/** Completed keys that the repeated-key measurements cycle through. */
const REPEATED_KEYS = 200;
/** Records of the request-count pass (counts do not vary: a short pass is exact). */
const COUNTED_RECORDS = 100;

export interface DynamoDbBenchPlan {
  /** Records per measurement, by concurrency. */
  messages: Record<number, number>;
  concurrencies: number[];
  rounds: number;
  warmups: number;
}

export interface DynamoDbBenchResults {
  plan: DynamoDbBenchPlan;
  throughput: Map<string, Result>;
  /** Requests per record by contender and mode, on dynalite and as on Amazon DynamoDB. */
  requests: Record<
    'dynalite' | 'aws',
    Record<string, { perRecord: number; byOperation: Record<string, number> }>
  >;
  dynaliteVersion: string;
}

const caseId = (contender: string, mode: KeyMode, concurrency: number) =>
  `${contender}/${mode}/c${concurrency}`;

export async function benchDynamoDb(
  plan: DynamoDbBenchPlan,
  log: (line: string) => void,
): Promise<DynamoDbBenchResults> {
  const dynamo = await startDynalite({ childProcess: true });
  const contenders: DynamoDbContender[] = [];
  try {
    const tables = new Map<DynamoDbContenderId, string>();
    for (const id of CONTENDERS) tables.set(id, await dynamo.createTable({ name: `bench-${id}` }));
    const byId = new Map<DynamoDbContenderId, DynamoDbContender>();
    for (const id of CONTENDERS) {
      const contender = dynamoDbContender(id, dynamo, tables.get(id)!);
      byId.set(id, contender);
      contenders.push(contender);
    }

    const cases: BenchCase[] = [];
    for (const concurrency of plan.concurrencies) {
      for (const mode of MODES) {
        for (const id of CONTENDERS) {
          const contender = byId.get(id)!;
          const count = plan.messages[concurrency];
          let payloads: OrderPayload[] = [];
          cases.push({
            id: caseId(id, mode, concurrency),
            async prepare() {
              // A fresh table each time, so that no case pays for the items of the ones before it.
              await recreateTable(dynamo, contender.tableName);
              payloads = Array.from({ length: mode === 'unique' ? count : REPEATED_KEYS }, newPayload);
              // Completed through the contender itself, so each finds its own record format.
              if (mode === 'repeated') for (const payload of payloads) await contender.handle(payload);
            },
            measure: () =>
              measureOps((i) => contender.handle(payloads[i % payloads.length]), count, concurrency),
          });
        }
      }
    }
    const throughput = await runRounds(cases, {
      rounds: plan.rounds,
      warmups: plan.warmups,
      onRound: (round) => log(round < 0 ? '  warm-up round' : `  round ${round + 1}/${plan.rounds}`),
    });

    log('  requests per record (dynalite, and with the item of a failed condition as on AWS)');
    const requests: DynamoDbBenchResults['requests'] = { dynalite: {}, aws: {} };
    for (const [where, allOld] of [
      ['dynalite', false],
      ['aws', true],
    ] as const) {
      for (const id of CONTENDERS) {
        const contender = dynamoDbContender(id, dynamo, tables.get(id)!, { allOld });
        contenders.push(contender);
        for (const mode of MODES) {
          await recreateTable(dynamo, contender.tableName);
          const payloads = Array.from({ length: COUNTED_RECORDS }, newPayload);
          if (mode === 'repeated') for (const payload of payloads) await contender.handle(payload);
          const before = { ...contender.requests };
          for (const payload of payloads) await contender.handle(payload);
          const byOperation = Object.fromEntries(
            Object.entries(contender.requests)
              .map(([operation, sent]) => [operation, (sent - (before[operation] ?? 0)) / COUNTED_RECORDS])
              .filter(([, perRecord]) => (perRecord as number) > 0),
          );
          requests[where][`${id}/${mode}`] = { perRecord: totalRequests(byOperation), byOperation };
        }
      }
    }
    return { plan, throughput, requests, dynaliteVersion: dynaliteVersion() };
  } finally {
    await Promise.all(contenders.map((contender) => contender.close()));
    await dynamo.stop();
  }
}

async function recreateTable(dynamo: DynaliteServer, tableName: string): Promise<void> {
  await dynamo.deleteTable(tableName);
  await dynamo.createTable({ name: tableName });
}

function dynaliteVersion(): string {
  const manifest = join(process.cwd(), 'node_modules', 'dynalite', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** The report's DynamoDB section. */
export function renderDynamoDbSection({
  plan,
  throughput,
  requests,
  dynaliteVersion,
}: DynamoDbBenchResults): string[] {
  const out: string[] = [];
  const table = (header: string[], align: string[], rows: string[][]) =>
    out.push(
      `| ${header.join(' | ')} |`,
      `|${align.join('|')}|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
      '',
    );
  const get = (id: DynamoDbContenderId, mode: KeyMode, concurrency: number) =>
    throughput.get(caseId(id, mode, concurrency))!;
  const describeRequests = ({
    perRecord,
    byOperation,
  }: {
    perRecord: number;
    byOperation: Record<string, number>;
  }) =>
    `${perRecord.toFixed(2)} (${Object.entries(byOperation)
      .map(([operation, count]) => `${count === 1 ? '' : `${count.toFixed(2)} `}${operation}`)
      .join(' + ')})`;

  out.push("## DynamoDB: the store beside Powertools' DynamoDBPersistenceLayer (on dynalite)", '');
  out.push(
    '- (a) `DynamoDbIdempotencyStore` (`nestjs-idempotent-sqs/dynamodb`): tryAcquire, no-op, markComplete.',
    "- (c) Powertools: `makeIdempotent(noop, { persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client }), config: new IdempotencyConfig({ eventKeyJmesPath: 'id' }) })`.",
    `- Both on one dynalite ${dynaliteVersion} (in memory), run in its own Node process; each contender has its own table ` +
      '(re-created before every measurement) and its own `DynamoDBClient` with `recommendedDynamoDbClientConfig`. ' +
      `Medians of ${plan.rounds} rounds, ${plan.messages[1]} records at 1 in flight and ` +
      `${plan.messages[Math.max(...plan.concurrencies)]} at ${Math.max(...plan.concurrencies)}.`,
    '',
  );
  table(
    [
      'keys',
      'in flight',
      '(a) records/s',
      '(c) records/s',
      '(a)/(c)',
      '(a) CPU µs/record',
      '(c) CPU µs/record',
    ],
    ['---', '---:', '---:', '---:', '---:', '---:', '---:'],
    plan.concurrencies.flatMap((concurrency) =>
      MODES.map((mode) => {
        const [a, c] = [get('a', mode, concurrency), get('c', mode, concurrency)];
        return [
          mode,
          `${concurrency}`,
          formatRate(a.perSecond),
          formatRate(c.perSecond),
          formatRatio(a.perSecond / c.perSecond),
          a.cpuMicros.toFixed(1),
          c.cpuMicros.toFixed(1),
        ];
      }),
    ),
  );
  out.push('### Requests per record', '');
  table(
    ['keys', '(a) on dynalite', '(c) on dynalite', '(a) as on Amazon DynamoDB', '(c) as on Amazon DynamoDB'],
    ['---', '---:', '---:', '---:', '---:'],
    MODES.map((mode) => [
      mode,
      describeRequests(requests.dynalite[`a/${mode}`]),
      describeRequests(requests.dynalite[`c/${mode}`]),
      describeRequests(requests.aws[`a/${mode}`]),
      describeRequests(requests.aws[`c/${mode}`]),
    ]),
  );
  out.push(
    '- dynalite is one single-threaded JavaScript process evaluating every request on an in-memory LevelDB: it is',
    '  the bottleneck of both contenders, so records/s measure dynalite as much as the clients, and say nothing of',
    '  Amazon DynamoDB (a few ms per request over the network, and capacity that scales). The ratio (a)/(c) and the',
    '  requests per record carry over; the CPU per record is what each client costs the Node process.',
    '- Both contenders make the same writes: a conditional put to claim, an update to complete. A duplicate fails',
    "  the put's condition; dynalite does not return the item that failed it (`ReturnValuesOnConditionCheckFailure:",
    '  ALL_OLD`), so both read it with a consistent GetItem. Amazon DynamoDB returns it: one request per duplicate for',
    '  both (the right-hand columns count with a client that receives the item as DynamoDB sends it).',
    '',
  );
  return out;
}
