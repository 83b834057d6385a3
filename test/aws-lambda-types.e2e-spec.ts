import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

// The promise of test/types/aws-lambda.types-spec.ts (the Lambda types and `@types/aws-lambda`
// assignable both ways) is kept only if that file is compiled. `npm run typecheck` compiles it;
// this spec compiles it on its own, so the suite fails too when a type drifts.

const root = join(__dirname, '..');
const file = join(__dirname, 'types', 'aws-lambda.types-spec.ts');

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return { ...parsed.options, noEmit: true, types: ['node'] };
}

describe('AWS Lambda types', () => {
  it('createSqsLambdaHandler and the record builders are assignable to and from @types/aws-lambda', () => {
    const program = ts.createProgram([file], compilerOptions());
    const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file
        ? `${relative(root, diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
        : '';
      return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
    expect(diagnostics).toEqual([]);
  }, 120_000);

  it('is part of what `npm run typecheck` compiles', () => {
    const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    expect(parsed.fileNames.map((name) => relative(root, name))).toContain(relative(root, file));
    // The file proves nothing if its negative cases were dropped.
    expect(readFileSync(file, 'utf8').match(/@ts-expect-error/g)?.length).toBeGreaterThanOrEqual(3);
  });
});
