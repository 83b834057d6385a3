import { SqsIdempotencyError } from './sqs-idempotency.error';

/**
 * The optional peer dependencies and the ranges package.json declares for them (a spec checks the
 * two agree). An app installs only those of the features it uses: an app without Redis must load
 * and run without `ioredis`. So no module reachable from an entry point may import one of them at
 * its top level (`import type` is fine, and erased); the part that needs one loads it through
 * `optionalPeer()` when it is first used.
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
 * Returns a loader that imports an optional peer on its first call (later calls share the result),
 * and turns "not installed" into a `MissingPeerDependencyError` saying which feature needs it and how
 * to install it. Pass the import as a literal arrow function, `() => import('sqs-consumer')`: the
 * type comes from it, bundlers (esbuild for Lambda) see the dependency, and each build keeps its
 * own module system (the CommonJS build compiles it to `require`, the ES build keeps `import()`).
 * Read named exports from the result, never `default`: the two builds disagree on what `default`
 * of a CommonJS package is.
 *
 * @example
 * ```ts
 * const loadSqsConsumer = optionalPeer('sqs-consumer', 'SqsModule polling', () => import('sqs-consumer'));
 * // later, in an async lifecycle hook:
 * const { Consumer } = await loadSqsConsumer();
 * ```
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

/**
 * `require` says `Cannot find module 'x'` (MODULE_NOT_FOUND), `import()` says `Cannot find package
 * 'x' imported from ...` (ERR_MODULE_NOT_FOUND). Only the peer itself missing is translated: a
 * missing dependency of an installed peer keeps its own, already precise, error.
 */
function isNotFound(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    (message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`))
  );
}
