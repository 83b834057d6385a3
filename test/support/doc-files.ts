import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * The Markdown files users read, relative to the repository: README.md and every page under docs/
 * (the API reference that `npm run docs` writes to docs/api/ is generated, not written, and left
 * out). Their code blocks are type-checked and their links followed by the docs specs.
 */
export function userDocs(): string[] {
  const docs = existsSync(join(ROOT, 'docs'))
    ? readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.md') && !file.startsWith('api/'))
        .map((file) => `docs/${file}`)
        .sort()
    : [];
  return ['README.md', ...docs];
}

/** The user docs and the pages for contributors and upgraders, whose links are followed too. */
export function allDocs(): string[] {
  return [...userDocs(), 'CONTRIBUTING.md', 'CHANGELOG.md'].filter((file) => existsSync(join(ROOT, file)));
}
