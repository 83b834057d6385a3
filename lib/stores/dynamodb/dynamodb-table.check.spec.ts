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
});
