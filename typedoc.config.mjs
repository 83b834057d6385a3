// `npm run docs`: the API reference, generated from the JSDoc of every entry point the package exports
// (package.json "exports", each mapped back to its source under lib/), written to docs/api/ (not committed).
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const entryPoints = Object.values(pkg.exports)
  .filter((target) => typeof target === 'object')
  .map((target) => target.require.types.replace(/^\.\/dist\/cjs\//, 'lib/').replace(/\.d\.ts$/, '.ts'));

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: pkg.name,
  entryPoints,
  tsconfig: 'tsconfig.build.json',
  out: 'docs/api',
  readme: 'none',
  excludePrivate: true,
  excludeProtected: true,
  excludeInternal: true,
  // Types of the peers (the AWS SDK, ioredis, pg) are theirs to document; converting them also trips TypeDoc.
  excludeExternals: true,
  sort: ['kind', 'alphabetical'],
  validation: { notExported: false, invalidLink: true, notDocumented: false },
  // A broken {@link} or a malformed tag fails the build instead of scrolling past.
  treatWarningsAsErrors: true,
};
