import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SCHEMA, load, Type } from 'js-yaml';
import { readmeBlocks } from './support/readme-blocks';

/**
 * The deployment the Lambda guide prints (docs/hosts/lambda.md, "Bundling and deploying") holds the
 * numbers it explains: partial batch responses on, a dead-letter queue after `maxReceiveCount`
 * receives, a visibility timeout at least six times the function's timeout, and a claim lease
 * (`inProgressTtl`) sized from that timeout. The template is read from the guide itself, so the
 * file users copy is the file checked. (test:compat runs its Makefile and the bundle it makes.)
 */

const GUIDE = join(__dirname, '..', 'docs', 'hosts', 'lambda.md');
const blocks = readmeBlocks(readFileSync(GUIDE, 'utf8'));
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

describe('docs/hosts/lambda.md: the SAM deployment', () => {
  const functions = ofType('AWS::Serverless::Function');
  const [functionId, fn] = functions[0];
  const property = (name: string) => fn.Properties[name] ?? template.Globals?.Function?.[name];
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
});
