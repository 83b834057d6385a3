// The code blocks of README.md, with the markers that say how each is checked. One parser for the
// README spec (test/readme.e2e-spec.ts: every `ts` block type-checks against the built package,
// the blocks marked `jest` run) and for `npm run test:compat` (the install and test-runner recipes
// run exactly as printed). Plain CommonJS so the .mjs compat runner and TypeScript specs share it.
//
// A marker is an HTML comment (invisible on GitHub) on the line right before the opening fence:
//
//   <!-- fragment -->                  not a whole file (a table row in code, a `...` body): not checked
//   <!-- fragment: needs a, B, 'pg' --> checked, with `a` and `B` declared as `any` (values and types)
//                                       and the module 'pg' declared untyped where it is not installed
//   <!-- jest -->                      also run as Jest tests by `npm test` (give it a path, below)
//   <!-- recipe: nest11/install -->    a step of a compat recipe (see test/compat/run-compat.mjs)
//
// Several directives go in one comment, separated by `;`. A `ts` block whose first line is a path
// comment (`// src/app.module.ts`) is written at that path, so other blocks can import it
// (`import { AppModule } from './app.module'`); other blocks are files of their own.
'use strict';

const DIRECTIVE = /^(fragment|jest|recipe)(?:\s*:\s*(.*))?$/;
const PATH_COMMENT = /^\/\/\s*([\w@.-]+(?:\/[\w@.-]+)*\.(?:ts|mts|cts))(?:\s|$)/;

/**
 * @typedef {object} ReadmeMarkers
 * @property {boolean} fragment  not a whole file
 * @property {string[]} needs    identifiers a fragment uses without declaring them
 * @property {string[]} needsModules  modules a fragment imports that may not be installed
 * @property {boolean} jest      run as Jest tests
 * @property {string[]} recipes  compat recipe steps
 */

/**
 * @typedef {object} ReadmeBlock
 * @property {number} fenceLine  README line of the opening fence (1-based)
 * @property {number} line       README line of the first line of code
 * @property {string} lang       the fence's language (`ts`, `bash`, `js`, `json`, or '')
 * @property {string} code       the code, without the indentation of a list item
 * @property {string | undefined} path  the path its first line names (`// src/app.module.ts`)
 * @property {ReadmeMarkers} markers
 * @property {string[]} markerErrors  what is wrong with its marker, if anything
 */

/**
 * Every fenced code block of a Markdown text, in order.
 * @param {string} markdown
 * @returns {ReadmeBlock[]}
 */
function readmeBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const close = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !close.test(lines[j]); j++) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    const { markers, errors } = parseMarkers(i > 0 ? lines[i - 1] : '');
    const path = PATH_COMMENT.exec(body[0] ?? '')?.[1];
    blocks.push({
      fenceLine: i + 1,
      line: i + 2,
      lang,
      code: body.join('\n'),
      path,
      markers,
      markerErrors: errors,
    });
    i = j;
  }
  return blocks;
}

/** The directives of the comment on the line before a fence (none when it is not a comment). */
function parseMarkers(line) {
  const markers = { fragment: false, needs: [], needsModules: [], jest: false, recipes: [] };
  const errors = [];
  const comment = /^\s*<!--\s*(.*?)\s*-->\s*$/.exec(line);
  if (!comment) return { markers, errors };
  for (const directive of comment[1]
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = DIRECTIVE.exec(directive);
    if (!match) {
      errors.push(`unknown marker "${directive}" (known: fragment, fragment: needs ..., jest, recipe: NAME)`);
      continue;
    }
    const [, name, argument] = match;
    if (name === 'jest' && argument === undefined) markers.jest = true;
    else if (name === 'recipe' && argument) markers.recipes.push(argument.trim());
    else if (name === 'fragment' && argument === undefined) markers.fragment = true;
    else if (name === 'fragment' && /^needs\s+\S/.test(argument)) {
      markers.fragment = true;
      for (const item of argument
        .replace(/^needs\s+/, '')
        .split(',')
        .map((part) => part.trim())) {
        const quoted = /^'([^']+)'$/.exec(item);
        if (quoted) markers.needsModules.push(quoted[1]);
        else if (/^[A-Za-z_$][\w$]*$/.test(item)) markers.needs.push(item);
        else errors.push(`"${item}" in "${directive}" is neither an identifier nor a quoted module name`);
      }
    } else errors.push(`malformed marker "${directive}"`);
  }
  return { markers, errors };
}

/**
 * The shell commands of a `bash` block: one per line, comments and blank lines dropped.
 * @param {string} code
 * @returns {string[]}
 */
function shellCommands(code) {
  return code
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean);
}

module.exports = { readmeBlocks, shellCommands };
