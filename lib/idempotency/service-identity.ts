import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';

/**
 * The service identity keeps one service's claims apart from another's on a shared store (else the
 * second to see an event acks it as a duplicate). From the `service` option, else
 * `AWS_LAMBDA_FUNCTION_NAME`, else `OTEL_SERVICE_NAME`; a shared store with none stops the start.
 */

/** The environment variables read for a default identity, in order. */
export const SERVICE_ENV_VARIABLES = ['AWS_LAMBDA_FUNCTION_NAME', 'OTEL_SERVICE_NAME'] as const;

/** The identity in use and where it came from (for the Idempotency Center and errors). */
export interface ServiceIdentity {
  /** The key segment; `undefined` when keys carry no service segment. */
  readonly service: string | undefined;
  readonly source: 'option' | (typeof SERVICE_ENV_VARIABLES)[number] | 'none';
}

/** The identity from the option, the environment and the store; throws when a shared store gets none. */
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
