import { SqsIdempotencyError } from './sqs-idempotency.error';

/**
 * The optional peers and their ranges (a spec checks package.json agrees). An app installs only the
 * peers of the features it uses, so each is loaded by `optionalPeer()` where its feature starts.
 */
export const OPTIONAL_PEERS = {
  '@aws-sdk/client-dynamodb': '^3.1018.0',
  '@aws-sdk/client-sns': '^3.1018.0',
  '@aws-sdk/client-sqs': '^3.1018.0',
  '@nestjs/microservices': '^11.0.0 || ^12.0.0',
  '@opentelemetry/api': '^1.3.0',
  ioredis: '^5.0.0',
  pg: '^8.0.0',
  'sqs-consumer': '^14.0.0 || ^15.0.0',
} as const;

/** The name of an optional peer dependency. */
export type OptionalPeerName = keyof typeof OPTIONAL_PEERS;

/** A feature was used whose optional peer dependency is not installed in the app. `code`: `'MISSING_PEER_DEPENDENCY'`. */
export class MissingPeerDependencyError extends SqsIdempotencyError {
  override readonly code: string = 'MISSING_PEER_DEPENDENCY';

  constructor(
    readonly packageName: OptionalPeerName,
    readonly feature: string,
    /** What the import threw (the resolution error, with the paths it searched). */
    readonly loadError?: unknown,
  ) {
    super(
      `${feature} needs the package "${packageName}" (${OPTIONAL_PEERS[packageName]}), an optional peer ` +
        `dependency of nestjs-idempotent-sqs that this app does not have. Install it: npm install ${packageName}`,
    );
  }
}

/**
 * A loader that imports an optional peer once, turning "not installed" into a
 * `MissingPeerDependencyError` that names the feature and the install line. Pass a literal
 * `() => import('x')` (bundlers see it, each build keeps its module system) and read named exports,
 * never `default` (the two builds disagree on a CommonJS package's `default`).
 */
export function optionalPeer<T>(
  packageName: OptionalPeerName,
  feature: string,
  load: () => Promise<T>,
): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined; // installed later (a test, a REPL): the next call tries again
      throw isNotFound(error, packageName)
        ? new MissingPeerDependencyError(packageName, feature, error)
        : error;
    }));
}

/** Only the peer itself missing is translated: a missing dependency of an installed peer keeps its own error. */
function isNotFound(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    (message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`))
  );
}
