import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import { allDocs, userDocs } from './support/doc-files';
import { ensureBuilt } from './support/ensure-built';
import { headingSlug, markdownAnchors, markdownLinks } from './support/markdown-links';

/**
 * Every relative link of README.md, docs/, CONTRIBUTING.md and CHANGELOG.md leads somewhere: the
 * file or folder exists, and an `#anchor` is a heading (or an HTML id) of the page it points to,
 * slugged by GitHub's rules. A dead one fails with the page, the line and the target. The same holds
 * where users read them: in the package as `npm pack` makes it, every link of every page it ships
 * resolves to a file it ships (node_modules/nestjs-idempotent-sqs/ has no CONTRIBUTING.md, no bench/).
 */
const ROOT = join(__dirname, '..');

/** The relative links of `pages` (paths under `root`) that lead nowhere, and how many were followed. */
function deadLinks(root: string, pages: readonly string[]): { dead: string[]; followed: number } {
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (file: string) => {
    if (!anchors.has(file)) anchors.set(file, markdownAnchors(readFileSync(join(root, file), 'utf8')));
    return anchors.get(file)!;
  };
  const dead: string[] = [];
  let followed = 0;
  for (const page of pages) {
    for (const { line, target } of markdownLinks(readFileSync(join(root, page), 'utf8'))) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
      followed++;
      const [path, anchor] = splitTarget(target);
      const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
      if (file.startsWith('..') || !existsSync(join(root, file))) {
        dead.push(`${page}:${line}: ${target} (no ${relative('.', file)})`);
      } else if (anchor !== undefined && !statSync(join(root, file)).isFile()) {
        dead.push(`${page}:${line}: ${target} (an anchor into a folder)`);
      } else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor)) {
        dead.push(`${page}:${line}: ${target} (${file} has no heading whose anchor is #${anchor})`);
      }
    }
  }
  return { dead, followed };
}

describe('links of the docs', () => {
  it('every relative link and #anchor resolves', () => {
    const { dead, followed } = deadLinks(ROOT, allDocs());
    expect(followed).toBeGreaterThan(50);
    expect(dead).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    expect(headingSlug('Idempotency Center (observability)')).toBe('idempotency-center-observability');
    expect(headingSlug('`inProgressTtl` must exceed the handler time')).toBe(
      'inprogressttl-must-exceed-the-handler-time',
    );
    expect(headingSlug('What "exactly once" covers, and the window it cannot close')).toBe(
      'what-exactly-once-covers-and-the-window-it-cannot-close',
    );
    expect(headingSlug('From `@ssut/nestjs-sqs`')).toBe('from-ssutnestjs-sqs');
    expect(headingSlug('Envelopes: SNS, EventBridge, S3, CloudEvents')).toBe(
      'envelopes-sns-eventbridge-s3-cloudevents',
    );
    expect(headingSlug('Lambda → SQS: the [guide](x.md)')).toBe('lambda--sqs-the-guide');
  });

  it('numbers repeated headings and finds no heading inside code', () => {
    const page = [
      '# A',
      '## Setup',
      '```md',
      '## Not a heading',
      '```',
      '## Setup',
      '<a id="kept"></a>',
    ].join('\n');
    expect([...markdownAnchors(page)]).toEqual(['a', 'setup', 'setup-1', 'kept']);
  });

  it('finds links outside code only', () => {
    const page = ['[a](x.md) `[b](y.md)`', '```', '[c](z.md)', '```', '![d](img.png "title")'].join('\n');
    expect(markdownLinks(page)).toEqual([
      { line: 1, target: 'x.md' },
      { line: 5, target: 'img.png' },
    ]);
  });
});

describe('links of the docs in the packed package', () => {
  let packed: string;
  let pkg: string;
  let size: number;

  beforeAll(() => {
    ensureBuilt();
    packed = mkdtempSync(join(tmpdir(), 'nestjs-idempotent-sqs-pack-'));
    // --ignore-scripts: prepack would build again; ensureBuilt() made dist/ current.
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packed], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [info] = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string; size: number }>;
    size = info.size;
    execFileSync('tar', ['xzf', join(packed, info.filename), '-C', packed]);
    pkg = join(packed, 'package'); // what node_modules/nestjs-idempotent-sqs/ holds once installed
  }, 120_000);
  afterAll(() => rmSync(packed, { recursive: true, force: true }));

  const shippedPages = () =>
    readdirSync(pkg, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.md'))
      .sort();

  it('ships the README, the CHANGELOG and every guide, and no API reference built in a clone', () => {
    const pages = shippedPages();
    expect(pages).toEqual(expect.arrayContaining([...userDocs(), 'CHANGELOG.md']));
    expect(pages.filter((page) => !page.startsWith('docs/'))).toEqual(['CHANGELOG.md', 'README.md']);
    expect(existsSync(join(pkg, 'docs', 'api'))).toBe(false);
  });

  it('every relative link of every page it ships resolves to a file it ships', () => {
    const { dead, followed } = deadLinks(pkg, shippedPages());
    expect(followed).toBeGreaterThan(50);
    expect(dead).toEqual([]);
  });

  it('ships the API reference as the JSDoc of its type declarations', () => {
    // The README says so: an editor shows these on hover; `npm run docs` renders the same in a clone.
    for (const build of ['cjs', 'esm']) {
      const declaration = readFileSync(
        join(pkg, 'dist', build, 'lambda', 'create-sqs-lambda-handler.d.ts'),
        'utf8',
      );
      expect(declaration).toContain('The Lambda entry point of an app');
    }
  });

  it('stays small: under 600 kB packed', () => {
    // 339 kB without the docs; the docs (Markdown and one screenshot) add about 150 kB.
    expect(size).toBeLessThan(600_000);
  });
});

function splitTarget(target: string): [string, string | undefined] {
  const hash = target.indexOf('#');
  return hash === -1 ? [target, undefined] : [target.slice(0, hash), target.slice(hash + 1)];
}
