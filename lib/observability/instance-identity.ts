import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** Who this app instance is, for the Idempotency Center's list of instances. */
export interface InstanceIdentity {
  /** `<host>/<pid>/<4 random bytes>`: several apps may run in one process (a worker pool, a demo). */
  id: string;
  host: string;
  pid: number;
  startedAt: string;
}

/** A fresh identity, taken once per `IdempotencyStats` (one per app). */
export function newInstanceIdentity(): InstanceIdentity {
  const host = safeHostname();
  return {
    id: `${host}/${process.pid}/${randomBytes(4).toString('hex')}`,
    host,
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
}

function safeHostname(): string {
  try {
    return hostname() || 'localhost';
  } catch {
    return 'localhost';
  }
}
