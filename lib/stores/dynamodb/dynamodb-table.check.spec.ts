import { checkTable, DynamoDbIdempotencyTableError, TableDescription } from './dynamodb-table.check';

// What DynamoDB answers and dynalite cannot: denied permissions and a TTL that is on. (The other
// answers, a missing table and each key-schema mismatch, come from dynalite in the e2e spec.)
describe('the start-up check of the table', () => {
  const layout = { partitionKey: 'id', ttlAttribute: 'expiresAt' };
  const table: TableDescription['table'] = {
    status: 'fulfilled',
    value: {
      Table: {
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      },
    },
  };
  const ttl = (TimeToLiveStatus: string, AttributeName?: string): TableDescription['timeToLive'] => ({
    status: 'fulfilled',
    value: { TimeToLiveDescription: { TimeToLiveStatus: TimeToLiveStatus as never, AttributeName } },
  });
  const denied = (operation: string) =>
    Object.assign(
      new Error(`User: arn:aws:sts::1:assumed-role/consumer is not authorized to perform: ${operation}`),
      {
        name: 'AccessDeniedException',
      },
    );

  it('says what to allow, or how to skip the check, when DescribeTable is denied', () => {
    const check = () =>
      checkTable('idempotency', layout, {
        table: { status: 'rejected', reason: denied('dynamodb:DescribeTable') },
        timeToLive: { status: 'rejected', reason: denied('dynamodb:DescribeTimeToLive') },
      });
    expect(check).toThrow(DynamoDbIdempotencyTableError);
    expect(check).toThrow(
      'DynamoDbIdempotencyStore: table "idempotency" cannot be described (User: arn:aws:sts::1:assumed-role/consumer ' +
        'is not authorized to perform: dynamodb:DescribeTable). Allow dynamodb:DescribeTable on it, or set ' +
        'checkTableOnStartup: false to skip this check.',
    );
  });

  it('has nothing to say about a table keyed as the options say with TTL on the expiry attribute', () => {
    expect(checkTable('idempotency', layout, { table, timeToLive: ttl('ENABLED', 'expiresAt') })).toEqual([]);
    expect(checkTable('idempotency', layout, { table, timeToLive: ttl('ENABLING', 'expiresAt') })).toEqual(
      [],
    );
  });

  it('keeps quiet when the TTL cannot be read (a denied DescribeTimeToLive)', () => {
    expect(
      checkTable('idempotency', layout, {
        table,
        timeToLive: { status: 'rejected', reason: denied('dynamodb:DescribeTimeToLive') },
      }),
    ).toEqual([]);
  });

  it('warns when TTL is on another attribute: the store should use that one', () => {
    expect(checkTable('idempotency', layout, { table, timeToLive: ttl('ENABLED', 'ttl') })).toEqual([
      'TTL of table "idempotency" is on attribute "ttl", not on "expiresAt": expired idempotency items are never ' +
        "deleted (they still count as expired, but the table keeps growing). Set ttlAttribute: 'ttl' in the store's options.",
    ]);
  });

  const sortKeyLayout = { partitionKey: 'pk', sortKey: { name: 'sk', value: 'idem' }, ttlAttribute: 'ttl' };
  const keyed = (keys: Array<[string, 'HASH' | 'RANGE', string]>): TableDescription['table'] => ({
    status: 'fulfilled',
    value: {
      Table: {
        KeySchema: keys.map(([AttributeName, KeyType]) => ({ AttributeName, KeyType })),
        AttributeDefinitions: keys.map(([AttributeName, , AttributeType]) => ({
          AttributeName,
          AttributeType: AttributeType as never,
        })),
      },
    },
  });
  const noTtl = ttl('ENABLED', 'ttl');
  const thrown = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return (error as Error).message;
    }
    return undefined;
  };

  it('gives the two AWS CLI lines that create a missing table with a sort key and turn its TTL on', () => {
    const notFound = Object.assign(new Error('Requested resource not found'), {
      name: 'ResourceNotFoundException',
    });
    expect(
      thrown(() =>
        checkTable('idem', sortKeyLayout, {
          table: { status: 'rejected', reason: notFound },
          timeToLive: noTtl,
        }),
      ),
    ).toBe(
      'DynamoDbIdempotencyStore: table "idem" does not exist (in the region and account the client uses). Create it: ' +
        'aws dynamodb create-table --table-name idem --attribute-definitions AttributeName=pk,AttributeType=S ' +
        'AttributeName=sk,AttributeType=S --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE ' +
        '--billing-mode PAY_PER_REQUEST && aws dynamodb update-time-to-live --table-name idem ' +
        '--time-to-live-specification Enabled=true,AttributeName=ttl',
    );
  });

  it('names a sort key of another name, and a numeric one, each with its fix', () => {
    const otherName = thrown(() =>
      checkTable('idem', sortKeyLayout, {
        table: keyed([
          ['pk', 'HASH', 'S'],
          ['kind', 'RANGE', 'S'],
        ]),
        timeToLive: noTtl,
      }),
    );
    expect(otherName).toContain(
      'table "idem" has partition key "pk" (S) and sort key "kind" (S); the store writes partition key "pk" and ' +
        "sort key \"sk\", strings (S). Set sortKey: { name: 'kind', value: ... } in the store's options.",
    );
    // The sort key's own type is read, not the partition key's.
    const numeric = thrown(() =>
      checkTable('idem', sortKeyLayout, {
        table: keyed([
          ['pk', 'HASH', 'S'],
          ['sk', 'RANGE', 'N'],
        ]),
        timeToLive: noTtl,
      }),
    );
    expect(numeric).toContain('has partition key "pk" (S) and sort key "sk" (N)');
    expect(numeric).toContain('The store keeps string keys: use a table whose key attributes are of type S.');
  });

  it('says a table described without a key schema has none', () => {
    expect(
      thrown(() =>
        checkTable('idem', layout, {
          table: { status: 'fulfilled', value: { Table: {} } },
          timeToLive: noTtl,
        }),
      ),
    ).toContain(
      'table "idem" has no partition key and no sort key; the store writes partition key "id" and no sort key',
    );
  });

  it('starts with a warning when the table cannot be described for another reason, naming it as it came', () => {
    const warning = (reason: unknown) =>
      checkTable('idem', layout, { table: { status: 'rejected', reason }, timeToLive: noTtl });
    const tail = '; starting anyway. Records fail closed (onStoreError) until DynamoDB answers.';
    expect(warning(Object.assign(new Error('rate exceeded'), { name: 'ThrottlingException' }))).toEqual([
      `Could not check table "idem" at start-up (ThrottlingException: rate exceeded)${tail}`,
    ]);
    expect(warning('socket hang up')).toEqual([
      `Could not check table "idem" at start-up (socket hang up)${tail}`,
    ]);
    expect(warning(undefined)).toEqual([`Could not check table "idem" at start-up (undefined)${tail}`]);
    // An error-shaped object (a wrapped client's) is named by its fields, not as [object Object].
    expect(warning({ name: 'TimeoutError', message: 'timed out' })).toEqual([
      `Could not check table "idem" at start-up (TimeoutError: timed out)${tail}`,
    ]);
  });

  it('warns of a table whose TTL was never set up (no description), with the command that turns it on', () => {
    expect(checkTable('idem', layout, { table, timeToLive: { status: 'fulfilled', value: {} } })).toEqual([
      'TTL of table "idem" is disabled: expired idempotency items are never deleted (they still count as expired, ' +
        'but the table keeps growing). Turn it on: aws dynamodb update-time-to-live --table-name idem ' +
        '--time-to-live-specification Enabled=true,AttributeName=expiresAt',
    ]);
  });
});
