import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { allDocs } from './support/doc-files';
import { headingSlug, markdownAnchors, markdownLinks } from './support/markdown-links';

/**
 * Every relative link of README.md, docs/, CONTRIBUTING.md and CHANGELOG.md leads somewhere: the
 * file or folder exists, and an `#anchor` is a heading (or an HTML id) of the page it points to,
 * slugged by GitHub's rules. A dead one fails with the page, the line and the target.
 */
const ROOT = join(__dirname, '..');

describe('links of the docs', () => {
  it('every relative link and #anchor resolves', () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsOf = (file: string) => {
      if (!anchors.has(file)) anchors.set(file, markdownAnchors(readFileSync(join(ROOT, file), 'utf8')));
      return anchors.get(file)!;
    };
    const dead: string[] = [];
    let followed = 0;
    for (const page of allDocs()) {
      for (const { line, target } of markdownLinks(readFileSync(join(ROOT, page), 'utf8'))) {
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
        followed++;
        const [path, anchor] = splitTarget(target);
        const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
        if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
          dead.push(`${page}:${line}: ${target} (no ${relative('.', file)})`);
        } else if (anchor !== undefined && !statSync(join(ROOT, file)).isFile()) {
          dead.push(`${page}:${line}: ${target} (an anchor into a folder)`);
        } else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor)) {
          dead.push(`${page}:${line}: ${target} (${file} has no heading whose anchor is #${anchor})`);
        }
      }
    }
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

function splitTarget(target: string): [string, string | undefined] {
  const hash = target.indexOf('#');
  return hash === -1 ? [target, undefined] : [target.slice(0, hash), target.slice(hash + 1)];
}
