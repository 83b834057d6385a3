import { IdempotencyConfigurationError } from './idempotency.errors';
import { parseKeyPath } from './idempotency-key';
import {
  IDEMPOTENCY_DEFAULTS,
  IdempotencyModuleOptions,
  IdempotentOptions,
  ResolvedIdempotencyOptions,
} from './idempotency-options.interface';

/**
 * Checks options at bootstrap, so a mistake stops the app with a sentence saying what to fix
 * instead of surfacing as lost or double-run messages in production.
 */
export function resolveModuleOptions(options: IdempotencyModuleOptions = {}): ResolvedIdempotencyOptions {
  const where = 'IdempotencyModule options';
  checkKeySource(options, where);
  const resolved: ResolvedIdempotencyOptions = {
    keyPath: options.keyPath ?? IDEMPOTENCY_DEFAULTS.keyPath,
    key: options.key,
    defaultKeySource: options.keyPath === undefined && options.key === undefined,
    ttl: checkTtl(options.ttl ?? IDEMPOTENCY_DEFAULTS.ttl, 'ttl', where),
    inProgressTtl: checkLease(options.inProgressTtl ?? IDEMPOTENCY_DEFAULTS.inProgressTtl, where),
    requireKey: checkBoolean(options.requireKey ?? IDEMPOTENCY_DEFAULTS.requireKey, 'requireKey', where),
    keyPrefix: options.keyPrefix ?? IDEMPOTENCY_DEFAULTS.keyPrefix,
    heartbeat: checkBoolean(options.heartbeat ?? IDEMPOTENCY_DEFAULTS.heartbeat, 'heartbeat', where),
    onStoreError: options.onStoreError ?? IDEMPOTENCY_DEFAULTS.onStoreError,
  };
  if (typeof resolved.keyPrefix !== 'string' || resolved.keyPrefix.length === 0) {
    throw new IdempotencyConfigurationError(`${where}: keyPrefix must be a non-empty string.`);
  }
  if (resolved.onStoreError !== 'fail' && resolved.onStoreError !== 'process') {
    throw new IdempotencyConfigurationError(
      `${where}: onStoreError must be 'fail' or 'process', got ${String(resolved.onStoreError)}.`,
    );
  }
  return resolved;
}

/** Checks the options of one `@Idempotent()` declaration; `where` names the handler. */
export function checkIdempotentOptions(options: IdempotentOptions, where: string): void {
  checkKeySource(options, where);
  if (options.ttl !== undefined) checkTtl(options.ttl, 'ttl', where);
  if (options.inProgressTtl !== undefined) checkLease(options.inProgressTtl, where);
  if (options.requireKey !== undefined) checkBoolean(options.requireKey, 'requireKey', where);
  if (options.scope !== undefined && (typeof options.scope !== 'string' || options.scope.length === 0)) {
    throw new IdempotencyConfigurationError(`${where}: scope must be a non-empty string.`);
  }
}

function checkKeySource(options: { keyPath?: string; key?: unknown }, where: string): void {
  if (options.keyPath !== undefined && options.key !== undefined) {
    throw new IdempotencyConfigurationError(`${where}: give either keyPath or key(), not both.`);
  }
  if (options.key !== undefined && typeof options.key !== 'function') {
    throw new IdempotencyConfigurationError(`${where}: key must be a function (payload, context) => key.`);
  }
  if (options.keyPath !== undefined) {
    const parsed = parseKeyPath(options.keyPath);
    if (typeof parsed === 'string') throw new IdempotencyConfigurationError(`${where}: ${parsed}.`);
  }
}

function checkTtl(value: unknown, name: string, where: string): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) {
    throw new IdempotencyConfigurationError(
      `${where}: ${name} must be a positive number of milliseconds (Infinity to remember keys forever), got ${String(value)}.`,
    );
  }
  return value;
}

function checkLease(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new IdempotencyConfigurationError(
      `${where}: inProgressTtl must be a positive, finite number of milliseconds (a crashed worker's claim must expire), got ${String(value)}.`,
    );
  }
  return value;
}

function checkBoolean(value: unknown, name: string, where: string): boolean {
  if (typeof value !== 'boolean') {
    throw new IdempotencyConfigurationError(`${where}: ${name} must be true or false, got ${String(value)}.`);
  }
  return value;
}
