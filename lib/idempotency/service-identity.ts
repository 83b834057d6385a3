import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';

/**
 * The service identity: the segment of every store key that keeps one service's claims apart from
 * another's on a shared store. Without it, `billing` and `shipping` consuming the same event through
 * their own queues on one Redis would share `idempotency:order_created:<id>`: whichever ran second
 * would ack the event as a duplicate and never run it (Powertools prefixes every key with the Lambda
 * function name for the same reason).
 *
 * Where it comes from, first found wins:
 * 1. the `service` option (`false`: no service segment, keys shared with every app on the store);
 * 2. `AWS_LAMBDA_FUNCTION_NAME`, which Lambda sets: unique per function in an account and region,
 *    so two functions never share keys by accident (a shared OpenTelemetry service name could);
 * 3. `OTEL_SERVICE_NAME`, the standard service name of OpenTelemetry.
 *
 * A store that keeps its keys in this process (the in-memory store says `shared = false`) needs
 * none; a shared store with none found stops the start-up with a sentence saying what to set,
 * rather than letting services share a namespace silently.
 */

/** The environment variables read for a default identity, in order. */
export const SERVICE_ENV_VARIABLES = ['AWS_LAMBDA_FUNCTION_NAME', 'OTEL_SERVICE_NAME'] as const;

/** The identity in use and where it came from (for the Idempotency Center and errors). */
export interface ServiceIdentity {
  /** The key segment; `undefined` when keys carry no service segment. */
  readonly service: string | undefined;
  readonly source: 'option' | (typeof SERVICE_ENV_VARIABLES)[number] | 'none';
}

/**
 * Resolves the identity from the `service` option, the environment and whether the store is
 * shared; throws `IdempotencyConfigurationError` when a shared store would get no identity.
 */
export function resolveServiceIdentity(
  option: unknown,
  store: { shared: boolean; name: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): ServiceIdentity {
  if (option === false) return { service: undefined, source: 'none' };
  if (option !== undefined) {
    if (typeof option !== 'string' || option.trim().length === 0) {
      throw new IdempotencyConfigurationError(
        `IdempotencyModule options: service must be a non-empty string naming this service (e.g. 'billing'), ` +
          `or false for keys without a service segment; got ${option === '' ? 'an empty string' : String(option)}.`,
      );
    }
    return { service: option, source: 'option' };
  }
  for (const variable of SERVICE_ENV_VARIABLES) {
    const value = env[variable];
    if (typeof value === 'string' && value.trim().length > 0) return { service: value, source: variable };
  }
  if (!store.shared) return { service: undefined, source: 'none' };
  throw new IdempotencyConfigurationError(
    `IdempotencyModule: the store ${store.name} is shared with other processes, and this app has no service ` +
      `identity to keep its keys apart: another service consuming the same events on that store would take ` +
      `them for duplicates and never run its handlers. Set the service option ` +
      `(IdempotencyModule.forRoot({ store, service: 'billing' })) or the OTEL_SERVICE_NAME environment ` +
      `variable (on Lambda, AWS_LAMBDA_FUNCTION_NAME is used). Apps that must share keys on purpose give ` +
      `the same service, or service: false for keys with no service segment (the 0.1 layout). ` +
      `A store that keeps its keys in this process only declares shared = false.`,
  );
}
