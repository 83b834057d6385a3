import { IdempotencyConfigurationError } from './idempotency.errors';
import { resolveServiceIdentity } from './service-identity';

describe('resolveServiceIdentity', () => {
  const shared = { shared: true, name: 'RedisIdempotencyStore' };
  const local = { shared: false, name: 'InMemoryIdempotencyStore' };
  const lambda = { AWS_LAMBDA_FUNCTION_NAME: 'billing-fn', OTEL_SERVICE_NAME: 'billing' };

  it('takes the service option first, whatever the environment says', () => {
    expect(resolveServiceIdentity('billing', shared, lambda)).toEqual({
      service: 'billing',
      source: 'option',
    });
  });

  it('defaults to the Lambda function name, then to OTEL_SERVICE_NAME', () => {
    expect(resolveServiceIdentity(undefined, shared, lambda)).toEqual({
      service: 'billing-fn',
      source: 'AWS_LAMBDA_FUNCTION_NAME',
    });
    expect(resolveServiceIdentity(undefined, shared, { OTEL_SERVICE_NAME: 'shipping' })).toEqual({
      service: 'shipping',
      source: 'OTEL_SERVICE_NAME',
    });
    expect(
      resolveServiceIdentity(undefined, shared, { AWS_LAMBDA_FUNCTION_NAME: ' ', OTEL_SERVICE_NAME: 'x' }),
    ).toEqual({ service: 'x', source: 'OTEL_SERVICE_NAME' });
  });

  it('refuses a shared store with no identity, saying exactly what to set', () => {
    const attempt = () => resolveServiceIdentity(undefined, shared, {});
    expect(attempt).toThrow(IdempotencyConfigurationError);
    expect(attempt).toThrow(/the store RedisIdempotencyStore is shared with other processes/);
    expect(attempt).toThrow(
      /service: 'billing'.*OTEL_SERVICE_NAME.*AWS_LAMBDA_FUNCTION_NAME.*service: false/s,
    );
  });

  it('needs no identity for a store local to the process', () => {
    expect(resolveServiceIdentity(undefined, local, {})).toEqual({ service: undefined, source: 'none' });
    expect(resolveServiceIdentity(undefined, local, { OTEL_SERVICE_NAME: 'x' }).service).toBe('x');
  });

  it('service: false gives keys no service segment, on any store (sharing on purpose)', () => {
    expect(resolveServiceIdentity(false, shared, lambda)).toEqual({ service: undefined, source: 'none' });
  });

  it.each([[''], ['  '], [42], [true], [null]])('refuses service %p', (value) => {
    expect(() => resolveServiceIdentity(value, shared, lambda)).toThrow(/service must be a non-empty string/);
  });
});
