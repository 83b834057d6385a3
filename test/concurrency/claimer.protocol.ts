/** What the controller gives one claimer process (CLAIMER environment variable, as JSON). */
export interface ClaimerConfig {
  name: string;
  /** The process's index among the claimer processes (spreads their starting keys). */
  index: number;
  /**
   * The Redis to claim on; or `dynamodb`, a table on a DynamoDB endpoint (dynalite); or `postgres`, a
   * table in a PostgreSQL database.
   */
  redisUrl?: string;
  dynamodb?: { endpoint: string; tableName: string };
  postgres?: { url: string; table: string };
  /** Store keys are `<keyPrefix>:<n>` for n in [0, keys). */
  keyPrefix: string;
  keys: number;
  /** Concurrent claimers of every key in this process, each on its own connection. */
  claimersPerKey: number;
  leaseMs: number;
}

/** What a claimer process counted itself. */
export interface ClaimerTally {
  type: 'tally';
  name: string;
  /** Per key index: ACQUIRED answers this process got. */
  acquired: number[];
  /** Per key index: the token that got ACQUIRED here, or null. */
  winners: Array<string | null>;
  answers: Record<'ACQUIRED' | 'IN_PROGRESS' | 'COMPLETED', number>;
}

export type ClaimerMessage = { type: 'ready' } | ClaimerTally;
