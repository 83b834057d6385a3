import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import { resolveServiceIdentity, SERVICE_ENV_VARIABLES } from './service-identity';

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
  it('reads the Lambda function name before OTEL_SERVICE_NAME', () => {
    expect(SERVICE_ENV_VARIABLES).toEqual(['AWS_LAMBDA_FUNCTION_NAME', 'OTEL_SERVICE_NAME']);
    expect(resolveServiceIdentity(undefined, shared, { AWS_LAMBDA_FUNCTION_NAME: 'fn' })).toEqual({
      service: 'fn',
      source: 'AWS_LAMBDA_FUNCTION_NAME',
    });
  });

  it('takes a blank environment variable for an unset one', () => {
    const blank = { AWS_LAMBDA_FUNCTION_NAME: '', OTEL_SERVICE_NAME: ' \t' };
    expect(() => resolveServiceIdentity(undefined, shared, blank)).toThrow(/has no service identity/);
    expect(resolveServiceIdentity(undefined, local, blank)).toEqual({ service: undefined, source: 'none' });
  });

  it('reads process.env when given no environment', () => {
    const saved = { ...process.env };
    try {
      delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      process.env.OTEL_SERVICE_NAME = 'from-process-env';
      expect(resolveServiceIdentity(undefined, shared)).toEqual({
        service: 'from-process-env',
        source: 'OTEL_SERVICE_NAME',
      });
    } finally {
      process.env = saved;
    }
  });

  it('says what a refused service option was, and what to write instead', () => {
    const advice =
      "IdempotencyModule options: service must be a non-empty string naming this service (e.g. 'billing'), " +
      'or false for keys without a service segment; got ';
    expect(() => resolveServiceIdentity('', shared, lambda)).toThrow(`${advice}an empty string.`);
    expect(() => resolveServiceIdentity(' ', local, {})).toThrow(`${advice} .`);
    expect(() => resolveServiceIdentity(42, local, {})).toThrow(`${advice}42.`);
    expect(() => resolveServiceIdentity(null, local, {})).toThrow(IdempotencyConfigurationError);
  });

  it('explains in full why a shared store needs an identity', () => {
    expect(() => resolveServiceIdentity(undefined, shared, {})).toThrow(
      'IdempotencyModule: the store RedisIdempotencyStore is shared with other processes, and this app has no service ' +
        'identity to keep its keys apart: another service consuming the same events on that store would take ' +
        'them for duplicates and never run its handlers. Set the service option ' +
        "(IdempotencyModule.forRoot({ store, service: 'billing' })) or the OTEL_SERVICE_NAME environment " +
        'variable (on Lambda, AWS_LAMBDA_FUNCTION_NAME is used). Apps that must share keys on purpose give ' +
        'the same service, or service: false for keys with no service segment (the 0.1 layout). ' +
        'A store that keeps its keys in this process only declares shared = false.',
    );
  });
});
