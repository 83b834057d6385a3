import { AttemptTokens } from './attempt-tokens';

describe('AttemptTokens', () => {
  it('never returns a token twice, within a source or across sources (one per service, per process)', () => {
    const seen = new Set<string>();
    for (const source of [new AttemptTokens(), new AttemptTokens()]) {
      for (let i = 0; i < 10_000; i++) seen.add(source.next());
    }
    expect(seen.size).toBe(20_000);
  });

  it('draws a random prefix per source: two sources share no prefix, so no token', () => {
    const [a, b] = [new AttemptTokens().next(), new AttemptTokens().next()];
    const prefixOf = (token: string) => token.slice(0, token.lastIndexOf('.'));
    expect(prefixOf(a)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(prefixOf(a)).not.toBe(prefixOf(b));
  });
});
