import { join } from 'node:path';
import { forkTs } from './support/fork-ts';
import type { TracingLoadingReport } from './fixtures/tracing-loading.main';

/**
 * No cost when unused (#52): in a fresh process, an app whose process has no `@opentelemetry/api`, and
 * one with the API but no tracer provider registered, load none of the tracing files (the API itself
 * is loaded in the second, to ask whether a provider is registered) and still run their records; with
 * a provider registered, the record tracer loads and each record gets its span.
 */

function run(env: Record<string, string | undefined>): Promise<TracingLoadingReport[]> {
  const child = forkTs(join(__dirname, 'fixtures', 'tracing-loading.main.ts'), env);
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  return new Promise((resolve, reject) => {
    let reports: TracingLoadingReport[] | undefined;
    child.on('message', (message: TracingLoadingReport[]) => (reports = message));
    child.once('exit', (code) =>
      code === 0 && reports ? resolve(reports) : reject(new Error(`exited ${code}: ${stderr.join('')}`)),
    );
  });
}

describe('tracing loads only where a tracer provider is registered', () => {
  it('without @opentelemetry/api: nothing of tracing, nor the API, and the records run', async () => {
    expect(await run({ HIDE_OPENTELEMETRY: '1' })).toEqual([
      {
        scenario: 'no api',
        statuses: ['OK', 'DUPLICATE'],
        loaded: ['common/tracer-provider.check.ts'],
        apiLoaded: false,
      },
    ]);
  }, 60_000);

  it('with the API but no provider: nothing of tracing; with one: the record tracer, and a span per record', async () => {
    const [none, registered] = await run({});
    expect(none).toEqual({
      scenario: 'no provider',
      statuses: ['OK', 'DUPLICATE'],
      loaded: ['common/tracer-provider.check.ts'],
      apiLoaded: true,
    });
    expect(registered).toEqual({
      scenario: 'provider',
      statuses: ['OK', 'DUPLICATE'],
      loaded: ['common/tracer-provider.check.ts', 'sqs/pipeline/record-tracing.ts'],
      apiLoaded: true,
      spans: 2,
    });
  }, 60_000);
});
