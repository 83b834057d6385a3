import { nearestName, OptionShape, readOptions } from './known-options';

interface Example {
  keyPath?: string;
  inProgressTtl?: number;
  heartbeat?: boolean;
  fingerprint?: boolean | string[] | (() => unknown);
  key?: (event: { id: string }) => string;
  log?: false | { format?: string };
}

const shape: OptionShape<Example> = {
  keyPath: 'string',
  inProgressTtl: 'number',
  heartbeat: 'boolean',
  fingerprint: ['boolean', 'array', 'function'],
  key: 'function',
  log: [{ format: 'string' }, 'boolean'],
};

class ConfigError extends Error {}

const read = (options: unknown) => readOptions(options as Example, shape, 'Here', ConfigError);
const refusal = (options: unknown): Error => {
  try {
    read(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as Error;
  }
  throw new Error('accepted');
};

describe('readOptions', () => {
  it('reads known names with values of their kinds into a plain object, an undefined one given kept', () => {
    const fingerprint = () => 1;
    expect(read({ keyPath: 'id', inProgressTtl: 5, heartbeat: false, fingerprint: ['a'] })).toEqual({
      keyPath: 'id',
      inProgressTtl: 5,
      heartbeat: false,
      fingerprint: ['a'],
    });
    const given = read({ fingerprint, keyPath: undefined });
    expect(given).toEqual({ fingerprint, keyPath: undefined });
    expect(Object.keys(given)).toEqual(['keyPath', 'fingerprint']);
    expect(read(undefined)).toEqual({});
    expect(read({})).toEqual({});
  });

  it('reads a settings class: own fields, getters of its classes, and methods bound to it', () => {
    class Base {
      get heartbeat(): boolean {
        return true;
      }
    }
    class Settings extends Base {
      inProgressTtl = 60_000;
      readonly #prefix = 'order:';
      get keyPath(): string {
        return 'eventId';
      }
      key(event: { id: string }): string {
        return this.#prefix + event.id;
      }
      describe(): string {
        return 'a method of no option name is not an option';
      }
    }
    const options = read(new Settings());
    expect(Object.getPrototypeOf(options)).toBe(Object.prototype);
    expect(options).toMatchObject({ inProgressTtl: 60_000, keyPath: 'eventId', heartbeat: true });
    expect(options.key!({ id: '7' })).toBe('order:7');
    // A function a getter returns is its value as it is.
    const key = (event: { id: string }) => event.id;
    class KeyGetter {
      get key() {
        return key;
      }
    }
    expect(read(new KeyGetter()).key).toBe(key);
  });

  it('reads nested options objects the same way, and takes a kind beside them', () => {
    class LogSettings {
      get format(): string {
        return 'json';
      }
    }
    expect(read({ log: new LogSettings() })).toEqual({ log: { format: 'json' } });
    expect(read({ log: false })).toEqual({ log: false });
    expect(refusal({ log: { fromat: 'json' } }).message).toBe(
      'Here: log: unknown option "fromat"; did you mean "format"? Known options: format.',
    );
  });

  it('refuses an unknown name, naming the nearest known one, every known one, and a settings class', () => {
    expect(refusal({ kepPath: 'id' }).message).toBe(
      'Here: unknown option "kepPath"; did you mean "keyPath"? Known options: keyPath, inProgressTtl, heartbeat, fingerprint, key, log.',
    );
    expect(refusal({ inProgressTTL: 1 }).message).toMatch('did you mean "inProgressTtl"?');
    expect(refusal({ hearbteat: true }).message).toMatch('did you mean "heartbeat"?');
    class Typo {
      get kepPath(): string {
        return 'eventId';
      }
    }
    expect(refusal(new Typo()).message).toMatch(
      /^Here: unknown option "kepPath" \(of Typo\); did you mean "keyPath"\?/,
    );
    class WithState {
      constructor(private readonly env: Record<string, string>) {}
      get keyPath(): string {
        return this.env.KEY_PATH;
      }
    }
    expect(refusal(new WithState({})).message).toMatch(/^Here: unknown option "env" \(of WithState\)/);
  });

  it('never reads a getter of an unknown name, and names the option whose getter throws', () => {
    class Lazy {
      get secret(): string {
        throw new Error('not loaded');
      }
    }
    expect(refusal(new Lazy()).message).toMatch(/^Here: unknown option "secret" \(of Lazy\)/);
    class Broken {
      get keyPath(): string {
        throw new Error('KEY_PATH is not set');
      }
    }
    expect(refusal(new Broken()).message).toBe('Here: reading keyPath threw: KEY_PATH is not set');
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
    [
      'a string for a nested object',
      { log: 'json' },
      'Here: log must be an object or true or false, got string "json".',
    ],
  ])('refuses %s, naming the option', (_, options, message) => {
    expect(refusal(options).message).toBe(message);
  });

  it.each<[string, unknown, string]>([
    ['null', null, 'null'],
    ['true', true, 'boolean true'],
    ['42', 42, 'number 42'],
    ['an array', ['id'], 'an array'],
  ])('refuses options that are %s', (_, options, described) => {
    expect(refusal(options).message).toBe(`Here: expected an options object, got ${described}.`);
  });
});

describe('nearestName', () => {
  it('ignores case, and breaks ties by order', () => {
    expect(nearestName('KEYPATH', ['keyPrefix', 'keyPath'])).toBe('keyPath');
    expect(nearestName('ttl', ['tll', 'ttls'])).toBe('tll');
    expect(nearestName('queu', ['queues', 'queue'])).toBe('queue');
    expect(nearestName('visiblityTimeout', ['waitTimeSeconds', 'visibilityTimeout'])).toBe(
      'visibilityTimeout',
    );
  });
});
