import type { ClaimerConfig } from './claimer.protocol';

/** What the controller gives one Postgres claimer process (CLAIMER environment variable, as JSON). */
export interface PostgresClaimerConfig extends Omit<ClaimerConfig, 'redisUrl'> {
  /** The database to claim in. */
  url: string;
  /** The store's table there. */
  table: string;
}
