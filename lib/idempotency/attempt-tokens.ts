import { randomBytes } from 'node:crypto';

/**
 * The tokens of claim attempts. A token only has to be unique per attempt (it fences a stale owner's
 * writes), so each is a random prefix (128 bits, drawn once) and a count: unique across processes as
 * long as no two prefixes collide. Cheaper than `randomUUID()`, whose 20 concatenated pieces a `Map`
 * or a socket write must flatten (+9-11% first sightings, `bench/PROFILE.md`), and shorter on the wire.
 */
export class AttemptTokens {
  private readonly prefix = `${randomBytes(16).toString('base64url')}.`;
  private count = 0;

  /** A token no earlier call of this source returned. */
  next(): string {
    return this.prefix + (++this.count).toString(36);
  }
}
