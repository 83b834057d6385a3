import { CreateTableCommand, DescribeTableCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SCHEMA, load, Type } from 'js-yaml';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';
import { CapturingLogger } from './support/capturing-logger';
import { startDynalite } from './support/dynalite';
import { ensureBuilt } from './support/ensure-built';
import { readmeBlocks } from './support/readme-blocks';
import { waitFor } from './support/wait-for';

/**
 * The deployment the Lambda guide prints (docs/hosts/lambda.md, "Bundling and deploying") holds the
 * numbers it explains: partial batch responses on, a dead-letter queue after `maxReceiveCount`
 * receives, a visibility timeout at least six times the function's timeout, a claim lease
 * (`inProgressTtl`) sized from that timeout, and a shared store: a DynamoDB table the function may
 * use, which the module the guide shows reads from the variables the template sets (every one of
 * them), and runs on. The template and the module are read from the guide itself, so what users copy
 * is what is checked. (test:compat runs its Makefile and the bundle it makes.)
 */

const GUIDE = join(__dirname, '..', 'docs', 'hosts', 'lambda.md');
const ROOT = join(__dirname, '..');
const blocks = readmeBlocks(readFileSync(GUIDE, 'utf8'));
/** The guide's module of the function (`// src/lambda.module.ts`). */
const lambdaModule = blocks.find((block) => block.path === 'src/lambda.module.ts');
const recipe = (name: string) => {
  const block = blocks.find((candidate) => candidate.markers.recipes.includes(`lambda/${name}`));
  if (!block) throw new Error(`docs/hosts/lambda.md has no block marked recipe: lambda/${name}`);
  return block.code;
};

/** CloudFormation's short intrinsic tags, kept as their long forms. */
const CLOUDFORMATION_SCHEMA = DEFAULT_SCHEMA.extend(
  ['Ref', 'GetAtt', 'Sub', 'Join', 'Select', 'Split', 'If', 'Equals', 'ImportValue', 'FindInMap'].flatMap(
    (name) =>
      (['scalar', 'sequence', 'mapping'] as const).map(
        (kind) =>
          new Type(`!${name}`, {
            kind,
            construct: (data: unknown) => ({
              [name === 'Ref' ? 'Ref' : `Fn::${name}`]:
                name === 'GetAtt' && typeof data === 'string' ? data.split('.') : data,
            }),
          }),
      ),
  ),
);

interface Resource {
  Type: string;
  Metadata?: Record<string, unknown>;
  Properties: Record<string, any>;
}
const template = load(recipe('template.yaml'), { schema: CLOUDFORMATION_SCHEMA }) as {
  Globals?: { Function?: Record<string, any> };
  Resources: Record<string, Resource>;
};
const resources = Object.entries(template.Resources);
const ofType = (type: string) => resources.filter(([, resource]) => resource.Type === type);
/** The logical id a `!GetAtt X.Arn` names. */
const arnOf = (value: unknown) => {
  const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  expect(getAtt?.[1]).toBe('Arn');
  return getAtt![0];
};

const functions = ofType('AWS::Serverless::Function');
const [functionId, fn] = functions[0];
const property = (name: string) => fn.Properties[name] ?? template.Globals?.Function?.[name];
/** The table the function's IDEMPOTENCY_TABLE names (`!Ref`). */
const tableId = (() => {
  const reference = property('Environment')?.Variables?.IDEMPOTENCY_TABLE as { Ref?: string } | undefined;
  return reference?.Ref ?? '(no IDEMPOTENCY_TABLE: !Ref ...)';
})();
const table = template.Resources[tableId];

describe('docs/hosts/lambda.md: the SAM deployment', () => {
  const sqsEvents = Object.values(fn.Properties.Events ?? {}) as Array<{ Type: string; Properties: any }>;
  const queueId = arnOf(sqsEvents[0]?.Properties.Queue);
  const queue = template.Resources[queueId];
  const timeoutSeconds = Number(property('Timeout'));

  it('has one function fed by one SQS queue', () => {
    expect(functions).toHaveLength(1);
    expect(sqsEvents.map((event) => event.Type)).toEqual(['SQS']);
    expect(queue.Type).toBe('AWS::SQS::Queue');
    expect(timeoutSeconds).toBeGreaterThan(0);
  });

  it('answers partial batch responses (ReportBatchItemFailures)', () => {
    expect(sqsEvents[0].Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('moves a record to a dead-letter queue after maxReceiveCount receives', () => {
    const { deadLetterTargetArn, maxReceiveCount } = queue.Properties.RedrivePolicy;
    const deadLetter = template.Resources[arnOf(deadLetterTargetArn)];
    expect(deadLetter.Type).toBe('AWS::SQS::Queue');
    expect(maxReceiveCount).toBeGreaterThanOrEqual(5);
    // The dead-letter queue keeps a record longer than the queue could have (4 days by default).
    expect(deadLetter.Properties.MessageRetentionPeriod).toBeGreaterThan(
      queue.Properties.MessageRetentionPeriod ?? 345_600,
    );
  });

  it('keeps the visibility timeout at least six times the function timeout', () => {
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeoutSeconds);
  });

  it('sizes inProgressTtl from the function timeout, and maxReceiveCount above the receives a lease can take', () => {
    const inProgressTtl = Number(property('Environment')?.Variables?.IDEMPOTENCY_IN_PROGRESS_TTL_MS);
    expect(inProgressTtl).toBe(timeoutSeconds * 1000);
    // Receives a redelivery can spend meeting IN_PROGRESS before the lease expires, plus retries.
    const waiting = Math.ceil(inProgressTtl / (queue.Properties.VisibilityTimeout * 1000));
    expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBeGreaterThan(waiting + 2);
  });

  it('builds with the Makefile target SAM runs, which bundles with the build:lambda script', () => {
    expect(fn.Metadata?.BuildMethod).toBe('makefile');
    expect(fn.Properties.Handler).toBe('index.handler');
    expect(recipe('Makefile')).toMatch(new RegExp(`^build-${functionId}:\\n(\\t.+\\n?)+$`));
    expect(recipe('Makefile')).toContain('npm run build:lambda');
    expect(recipe('Makefile')).toContain('"$(ARTIFACTS_DIR)/index.js"');
    const script = (JSON.parse(recipe('package.json')) as { scripts: Record<string, string> }).scripts[
      'build:lambda'
    ];
    expect(script).toMatch(/^tsc -p tsconfig\.lambda\.json && esbuild /);
    expect(script).toContain('--keep-names');
    expect(script).toContain('--main-fields=module,main');
    expect(script).toContain('--outfile=.lambda/bundle/index.js');
  });

  it("keeps the keys in a DynamoDB table made as the store's defaults expect (key id, TTL on expiresAt)", () => {
    expect(table?.Type).toBe('AWS::DynamoDB::Table');
    expect(table.Properties.KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
    expect(table.Properties.AttributeDefinitions).toEqual([{ AttributeName: 'id', AttributeType: 'S' }]);
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it('lets the function claim, complete and release keys in that table, and check it at start-up', () => {
    const statements = (property('Policies') as Array<{ Statement?: any[] }>).flatMap(
      (policy) => policy.Statement ?? [],
    );
    const onTable = statements.filter(
      (statement) => statement.Effect === 'Allow' && arnOf(statement.Resource) === tableId,
    );
    expect(onTable.flatMap((statement) => statement.Action)).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:DescribeTable',
        'dynamodb:DescribeTimeToLive',
      ]),
    );
  });

  it('reads every variable the template sets in the module it shows, on a DynamoDB store', () => {
    expect(lambdaModule).toBeDefined();
    const variables = Object.keys(property('Environment')?.Variables ?? {});
    expect(variables).toEqual(
      expect.arrayContaining(['IDEMPOTENCY_TABLE', 'IDEMPOTENCY_IN_PROGRESS_TTL_MS']),
    );
    const read = new Set(
      [...lambdaModule!.code.matchAll(/process\.env\.([A-Z0-9_]+)/g)].map(([, name]) => name),
    );
    expect(variables.filter((name) => !read.has(name))).toEqual([]);
    expect(lambdaModule!.code).toContain(
      'new DynamoDbIdempotencyStore({ tableName: process.env.IDEMPOTENCY_TABLE! })',
    );
    expect(lambdaModule!.code).toContain('inProgressTtl: Number(process.env.IDEMPOTENCY_IN_PROGRESS_TTL_MS');
  });
});

describe("docs/hosts/lambda.md: the function's module, on a table made as the template makes it", () => {
  // The module imports the built package: built while Jest loads the file, outside any test's deadline.
  ensureBuilt();
  const dir = join(ROOT, '.readme-check', `lambda-module-${process.pid}`);
  const saved = { ...process.env };
  afterAll(() => {
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('boots in a sandbox without the in-memory warning, handles an order once and acks its copy', async () => {
    // The guide's module and the README's Quick start it imports, as files of an app that imports the
    // built package by name (node_modules/nestjs-idempotent-sqs links to this repository).
    const quickStart = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8')).find(
      (block) => block.path === 'src/app.module.ts',
    )!;
    mkdirSync(join(dir, 'src'), { recursive: true });
    mkdirSync(join(dir, 'node_modules'), { recursive: true });
    symlinkSync(ROOT, join(dir, 'node_modules', 'nestjs-idempotent-sqs'), 'dir');
    writeFileSync(join(dir, 'src', 'app.module.ts'), quickStart.code);
    writeFileSync(join(dir, 'src', 'lambda.module.ts'), lambdaModule!.code);

    const dynamo = await startDynalite();
    try {
      // The template's table, as CloudFormation would create it (dynalite has no TTL to switch on).
      const admin = dynamo.client();
      const { TimeToLiveSpecification: _ttl, ...properties } = table.Properties;
      const tableName = `orders-idempotency-${process.pid}`;
      await admin.send(new CreateTableCommand({ TableName: tableName, ...properties }));
      await waitFor(
        async () =>
          (await admin.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus ===
          'ACTIVE',
        30_000,
        'the table to be active',
      );
      // What Lambda and the template put in the function's environment.
      Object.assign(process.env, {
        AWS_LAMBDA_FUNCTION_NAME: functionId,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        IDEMPOTENCY_TABLE: tableName,
        IDEMPOTENCY_IN_PROGRESS_TTL_MS: String(
          property('Environment').Variables.IDEMPOTENCY_IN_PROGRESS_TTL_MS,
        ),
      });

      const { LambdaModule } = await import(join(dir, 'src', 'lambda.module.ts'));
      const { createSqsLambdaHandler } = await import(join(dir, 'node_modules', 'nestjs-idempotent-sqs'));
      const logs = new CapturingLogger();
      const handler = createSqsLambdaHandler(LambdaModule, { nestOptions: { logger: logs } });
      try {
        const order = { type: 'order_created', id: 'evt-1', orderId: 'o-1', amount: 2 };
        const invoke = () =>
          handler(buildSqsEvent([buildSqsRecord(order, { queue: 'orders' })]), buildLambdaContext());
        await expect(invoke()).resolves.toEqual({ batchItemFailures: [] });
        await expect(invoke()).resolves.toEqual({ batchItemFailures: [] });
        const statuses = logs.lines.map((line) => /status=(\w+)/.exec(line.message)?.[1]).filter(Boolean);
        expect(statuses).toEqual(['OK', 'DUPLICATE']);
        expect(logs.find('warn', 'keeps its keys in this Lambda sandbox only')).toEqual([]);
        const { Items = [] } = await admin.send(new ScanCommand({ TableName: tableName }));
        expect(Items.map((item) => item.id.S)).toEqual([expect.stringContaining(`${functionId}`)]);
      } finally {
        await handler.close();
        admin.destroy();
      }
    } finally {
      await dynamo.stop();
    }
  });
});
