import { checkOptions, nearestName, OptionKinds } from './known-options';

interface Example {
  keyPath?: string;
  inProgressTtl?: number;
  heartbeat?: boolean;
  fingerprint?: boolean | string[] | (() => unknown);
}

const kinds: OptionKinds<Example> = {
  keyPath: 'string',
  inProgressTtl: 'number',
  heartbeat: 'boolean',
  fingerprint: ['boolean', 'array', 'function'],
};

describe('checkOptions', () => {
  const check = (options: unknown) => () => checkOptions(options, kinds, 'Here');

  it('passes known names with values of their kinds, undefined values, and no options at all', () => {
    expect(check({ keyPath: 'id', inProgressTtl: 5, heartbeat: false, fingerprint: ['a'] })).not.toThrow();
    expect(check({ fingerprint: () => 1, keyPath: undefined })).not.toThrow();
    expect(check(undefined)).not.toThrow();
    expect(check({})).not.toThrow();
  });

  it('refuses an unknown name, naming the nearest known one and every known one', () => {
    expect(check({ kepPath: 'id' })).toThrow(
      new TypeError(
        'Here: unknown option "kepPath"; did you mean "keyPath"? Known options: keyPath, inProgressTtl, heartbeat, fingerprint.',
      ),
    );
    expect(check({ inProgressTTL: 1 })).toThrow('did you mean "inProgressTtl"?');
    expect(check({ hearbteat: true })).toThrow('did you mean "heartbeat"?');
  });

  it.each<[string, unknown, string]>([
    [
      'a string for a boolean',
      { heartbeat: 'no' },
      'Here: heartbeat must be true or false, got string "no".',
    ],
    ['null', { keyPath: null }, 'Here: keyPath must be a string, got null.'],
    [
      'an object for a union',
      { fingerprint: {} },
      'Here: fingerprint must be true or false, an array or a function, got an object.',
    ],
  ])('refuses %s, naming the option', (_, options, message) => {
    expect(check(options)).toThrow(message);
  });

  it.each<[string, unknown, string]>([
    ['null', null, 'null'],
    ['true', true, 'boolean true'],
    ['42', 42, 'number 42'],
    ['an array', ['id'], 'an array'],
  ])('refuses options that are %s', (_, options, described) => {
    expect(check(options)).toThrow(`Here: expected an options object, got ${described}.`);
  });

  it('raises the error the caller makes', () => {
    class ConfigError extends Error {}
    expect(() => checkOptions({ x: 1 }, kinds, 'Here', (message) => new ConfigError(message))).toThrow(
      ConfigError,
    );
  });
});

describe('nearestName', () => {
  it('ignores case, counts a swap of two letters as one edit, and breaks ties by order', () => {
    expect(nearestName('KEYPATH', ['keyPrefix', 'keyPath'])).toBe('keyPath');
    expect(nearestName('ttl', ['tll', 'ttls'])).toBe('tll');
    expect(nearestName('queu', ['queues', 'queue'])).toBe('queue');
  });
});
