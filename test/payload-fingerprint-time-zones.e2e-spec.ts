import { join } from 'node:path';
import { forkTs } from './support/fork-ts';
import { requires } from './support/prerequisites';
import type { TimeZoneReport, TimeZoneRun } from './fixtures/fingerprint-time-zone.main';

/**
 * A whole-payload fingerprint is the same in every time zone (#48): two worker processes, one under
 * TZ=UTC and one under TZ=Asia/Tokyo, share one Redis; the event class reads an offset-less date as
 * a `Date` (`@Type(() => Date)`), so each handler gets another instant. The fingerprint hashes the
 * payload as it arrived (the text), so an exact copy handled in the other zone is a duplicate, not
 * "key reused for a different payload"; a payload that differs is still a mismatch there.
 */

const withRedis = requires('redis-server');

/** Runs one worker under `timeZone` and answers its reports. */
function runWorker(timeZone: string, run: TimeZoneRun): Promise<TimeZoneReport[]> {
  const child = forkTs(join(__dirname, 'fixtures', 'fingerprint-time-zone.main.ts'), {
    TZ: timeZone,
    FINGERPRINT_TZ_RUN: JSON.stringify(run),
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  return new Promise((resolve, reject) => {
    let reports: TimeZoneReport[] | undefined;
    child.on('message', (message: TimeZoneReport[]) => (reports = message));
    child.once('exit', (code) =>
      code === 0 && reports
        ? resolve(reports)
        : reject(new Error(`the ${timeZone} worker exited ${code}: ${stderr.join('')}`)),
    );
  });
}

withRedis.describe('payload fingerprints across time zones', () => {
  it('acks an exact copy handled in another zone as a duplicate, and still fails another payload', async () => {
    const booked = (id: string, slot: number) => ({
      type: 'delivery_booked',
      id,
      at: '2024-05-01T10:00:00',
      slot,
    });
    const run = { redisUrl: process.env.REDIS_URL!, keyPrefix: `fp-tz-${Date.now().toString(36)}` };

    const [utc] = await runWorker('UTC', { ...run, bodies: [booked('d-1', 1)] });
    expect(utc).toEqual({ status: 'OK', at: '2024-05-01T10:00:00.000Z' });

    const [copy, other, fresh] = await runWorker('Asia/Tokyo', {
      ...run,
      bodies: [booked('d-1', 1), booked('d-1', 2), booked('d-2', 1)],
    });
    expect(copy).toEqual({ status: 'DUPLICATE' });
    expect(other.status).toBe('FAILED');
    expect(other.error).toMatch(/whose payload has another fingerprint/);
    // The same text is another instant there: what a fingerprint of the event instance would have hashed.
    expect(fresh).toEqual({ status: 'OK', at: '2024-05-01T01:00:00.000Z' });
  }, 60_000);
});
