/**
 * Links and anchors of Markdown as GitHub renders them: what a page links to (outside code), and the
 * `#anchor` each of its headings gets. Used by test/docs-links.e2e-spec.ts.
 */

/** A link of a page: the line it is on and its target as written (`docs/x.md#y`, `#y`). */
export interface MarkdownLink {
  line: number;
  target: string;
}

/**
 * The page's text with fenced code blocks blanked (lines kept, so line numbers hold) and inline code
 * spans removed: links and headings inside code are not links or headings.
 */
export function withoutCode(markdown: string): string[] {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  return lines.map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length && line.trim() === open[1]) {
        fence = undefined;
      }
      return '';
    }
    if (open) {
      fence = open[1];
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, '');
  });
}

/** Every inline link and image of a page (`[text](target)`, `![alt](target)`), outside code. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  withoutCode(markdown).forEach((text, i) => {
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: i + 1, target: match[1] });
    }
  });
  return links;
}

/**
 * GitHub's anchor of a heading (github-slugger): the rendered text (code, emphasis and link syntax
 * gone), lower-cased, every character that is not a letter, mark, number, `_`, `-` or space dropped,
 * spaces made hyphens.
 */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/**
 * Every anchor a page has: one per heading (a repeated slug gets `-1`, `-2`, ..., as on GitHub) and
 * each HTML `id` or `name` it sets.
 */
export function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split('\n');
  withoutCode(markdown).forEach((blanked, i) => {
    // Headings keep their code spans (`inProgressTtl`): they are part of the rendered text.
    const heading = blanked === '' ? undefined : /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(lines[i]);
    if (heading) {
      const slug = headingSlug(heading[1]);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of blanked.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  });
  return anchors;
}
