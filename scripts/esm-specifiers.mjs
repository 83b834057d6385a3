// Node's ES module loader resolves relative imports literally: `./sqs/sqs.module` must be written
// `./sqs/sqs.module.js`, and a folder import `./testing` must be `./testing/index.js`. The sources in
// lib/ are written the CommonJS way (no extensions) and stay so; this step rewrites the emitted
// ES build instead (both the .js files and the .d.ts files, which TypeScript resolves by the same
// rules under `moduleResolution: node16 | nodenext`). A specifier that matches no emitted file is
// an error, never a guess.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/** Rewrites every relative specifier under `root`; returns how many files changed. */
export function addEsmExtensions(root) {
  let changed = 0;
  for (const file of listFiles(root)) {
    if (!file.endsWith('.js') && !file.endsWith('.d.ts')) continue;
    const text = readFileSync(file, 'utf8');
    const rewritten = rewriteSpecifiers(file, text);
    if (rewritten !== text) {
      writeFileSync(file, rewritten);
      changed++;
    }
  }
  return changed;
}

function rewriteSpecifiers(file, text) {
  const kind = file.endsWith('.d.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const edits = [];
  const visit = (node) => {
    const literal = specifierOf(node);
    if (literal && isRelative(literal.text)) {
      const resolved = resolveSpecifier(file, literal.text);
      if (resolved !== literal.text) {
        // Keep the quote character tsc chose; replace only what is between the quotes.
        edits.push({ start: literal.getStart(source) + 1, end: literal.getEnd() - 1, text: resolved });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  }
  return out;
}

/** The string literal naming a module: `import/export ... from`, `import()`, `import('x').T` in types. */
function specifierOf(node) {
  if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
    return ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier : undefined;
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    const [arg] = node.arguments;
    return arg && ts.isStringLiteral(arg) ? arg : undefined;
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
    return ts.isStringLiteral(node.argument.literal) ? node.argument.literal : undefined;
  }
  return undefined;
}

const isRelative = (specifier) => specifier === '.' || specifier === '..' || /^\.\.?\//.test(specifier);

function resolveSpecifier(file, specifier) {
  if (/\.(m|c)?js$/.test(specifier)) return specifier;
  const base = join(dirname(file), specifier);
  for (const [candidate, suffix] of [
    [`${base}.js`, '.js'],
    [`${base}.d.ts`, '.js'],
    [join(base, 'index.js'), '/index.js'],
    [join(base, 'index.d.ts'), '/index.js'],
  ]) {
    if (existsSync(candidate)) return specifier.replace(/\/$/, '') + suffix;
  }
  throw new Error(
    `ES build: ${relative(process.cwd(), file)} imports "${specifier}", which matches no emitted file ` +
      `(looked for ${specifier}.js and ${specifier}/index.js). Fix the import in lib/.`,
  );
}

function listFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}
