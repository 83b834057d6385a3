import { randomBytes } from 'node:crypto';

/**
 * The tokens of claim attempts. A token only has to be unique per attempt (it fences a stale owner's
 * writes: `markComplete`, `forget` and `extend` of another token are refused), so each is this
 * source's random prefix (128 bits, drawn once) and a count: unique within the source, and across
 * processes and restarts as long as no two prefixes collide.
 *
 * `randomUUID()` per attempt cost more than it looks: Node builds the UUID by concatenating 20 short
 * strings, a tree of cons strings that a `Map` or a socket write then flattens into a copy. This
 * token is one concatenation of two strings, and shorter on the wire (about 28 characters, not 36).
 */
export class AttemptTokens {
  private readonly prefix = `${randomBytes(16).toString('base64url')}.`;
  private count = 0;

  /** A token no earlier call of this source returned. */
  next(): string {
    return this.prefix + (++this.count).toString(36);
  }
}
