import { parseDemoOptions } from '../sample/demo/demo-options';

describe('the demo options', () => {
  it('defaults to the embedded SQS and the in-memory store', () => {
    const options = parseDemoOptions([], {}, 'http://127.0.0.1:1234');
    expect(options).toMatchObject({
      orders: 100,
      workers: 2,
      unsafe: false,
      endpoint: 'http://127.0.0.1:1234',
      embedded: true,
      redisUrl: undefined,
    });
  });

  it('reads the flags, SQS_ENDPOINT and REDIS_URL', () => {
    const env = {
      SQS_ENDPOINT: 'http://localhost:4566',
      REDIS_URL: 'redis://localhost:6379',
      AWS_REGION: 'eu-west-1',
    };
    const options = parseDemoOptions(['--orders', '5', '--workers', '3', '--unsafe', '--timeout', '9'], env);
    expect(options).toMatchObject({
      orders: 5,
      workers: 3,
      unsafe: true,
      timeoutMs: 9000,
      endpoint: 'http://localhost:4566',
      embedded: false,
      region: 'eu-west-1',
      redisUrl: 'redis://localhost:6379',
    });
    expect(parseDemoOptions(['--aws'], env).endpoint).toBeUndefined();
  });

  it('refuses unknown options and bad counts with the usage', () => {
    expect(() => parseDemoOptions(['--order', '5'], {})).toThrow(/Unknown option --order[\s\S]*--workers N/);
    expect(() => parseDemoOptions(['--workers', '0'], {})).toThrow(/--workers needs an integer >= 1/);
  });
});
