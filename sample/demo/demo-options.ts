/** The demo's settings, from the command line and the environment. */
export interface DemoOptions {
  /** Distinct orders (logical events). */
  orders: number;
  /** Consumer instances (Nest apps) polling the queue at once. */
  workers: number;
  /** Seed of the producer's plan, to replay a run. */
  seed: number;
  /** Run the handler without `@Idempotent()`, to see what duplicates do. */
  unsafe: boolean;
  /** Show the apps' logs (one line per record). */
  verbose: boolean;
  /** Give up after this long. */
  timeoutMs: number;
  /** Seconds SQS hides a received message before redelivering it. */
  visibilityTimeout: number;
  /** The SQS to use: an endpoint (fauxqs, LocalStack), or `undefined` for AWS itself. */
  endpoint: string | undefined;
  /** Whether `endpoint` is the fauxqs the launcher embedded. */
  embedded: boolean;
  region: string;
  /** Set: the idempotency store is Redis. */
  redisUrl: string | undefined;
  /** Port of the Idempotency Center page (0: any free port); `undefined`: no Center. */
  centerPort: number | undefined;
  /** Keep the Center up this long after the summary, to look at the final numbers. */
  centerHoldMs: number;
}

export const DEMO_USAGE = `Usage: npm start -- [options]

  --orders N      distinct orders to produce (default 100)
  --workers N     consumer instances polling the queue at once (default 2)
  --seed N        seed of the producer's plan (default 7)
  --unsafe        run the handler without @Idempotent(), to watch duplicates ship twice
  --verbose       show the apps' logs (one line per record)
  --timeout S     give up after S seconds (default 60)
  --aws           use Amazon SQS itself (credentials and AWS_REGION from the environment)
  --center-port N serve the Idempotency Center on port N (default: any free port)
  --center-hold S keep the Center up S seconds after the summary (default 0)
  --no-center     do not serve the Idempotency Center

Environment: SQS_ENDPOINT uses that SQS (e.g. LocalStack) instead of the embedded fauxqs;
REDIS_URL keeps idempotency keys in Redis.`;

/** Parses `argv` (after the script name); throws an `Error` with the usage on bad input. */
export function parseDemoOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  embeddedEndpoint?: string,
): DemoOptions {
  const options: DemoOptions = {
    orders: 100,
    workers: 2,
    seed: 7,
    unsafe: false,
    verbose: false,
    timeoutMs: 60_000,
    visibilityTimeout: 1,
    endpoint: embeddedEndpoint ?? env.SQS_ENDPOINT,
    embedded: embeddedEndpoint !== undefined,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    redisUrl: env.REDIS_URL || undefined,
    centerPort: 0,
    centerHoldMs: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const count = (min: number) => {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < min)
        throw new Error(`${flag} needs an integer >= ${min}\n\n${DEMO_USAGE}`);
      return value;
    };
    switch (flag) {
      case '--orders':
        options.orders = count(1);
        break;
      case '--workers':
        options.workers = count(1);
        break;
      case '--seed':
        options.seed = count(0);
        break;
      case '--timeout':
        options.timeoutMs = count(1) * 1000;
        break;
      case '--unsafe':
        options.unsafe = true;
        break;
      case '--verbose':
        options.verbose = true;
        break;
      case '--aws':
        options.endpoint = undefined;
        break;
      case '--center-port':
        options.centerPort = count(0);
        break;
      case '--center-hold':
        options.centerHoldMs = count(0) * 1000;
        break;
      case '--no-center':
        options.centerPort = undefined;
        break;
      default:
        throw new Error(`Unknown option ${flag}\n\n${DEMO_USAGE}`);
    }
  }
  return options;
}
