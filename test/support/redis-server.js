// Starts a private redis-server on a free port, so tests never touch a Redis they did not start.
// Plain CommonJS so both the Jest global setup (.mjs) and TypeScript tests can use it.
// REDIS_SERVER_BIN names another binary (default: `redis-server` on the PATH).
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
const { killOnExit } = require('./kill-on-exit');

/** The binary tests start: REDIS_SERVER_BIN, else `redis-server` from the PATH. */
const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN || 'redis-server';

/** Thrown when the binary cannot be started at all (not installed): the Redis specs are then not run. */
class RedisServerMissingError extends Error {
  constructor(cause) {
    super(
      `cannot start ${REDIS_SERVER_BIN} (${cause.message}): install it (sudo apt-get install -y redis-server) ` +
        'or point REDIS_SERVER_BIN at one',
    );
    this.name = 'RedisServerMissingError';
    /** Why, in a few words, for the "Not run here" list. */
    this.reason = `cannot start ${REDIS_SERVER_BIN}: ${cause.message}`;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Starts `redis-server` with no persistence on `port` (default: a free one).
 * @param {{ port?: number, args?: string[] }} [options]
 * @returns {Promise<{ port: number, url: string, pid: number, stop: () => Promise<void> }>}
 */
async function startRedisServer(options = {}) {
  const port = options.port ?? (await freePort());
  const child = spawn(
    REDIS_SERVER_BIN,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      ...(options.args ?? []),
    ],
    { stdio: 'ignore' },
  );
  killOnExit(child);
  let exited = false;
  child.on('exit', () => (exited = true));
  const spawned = new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new RedisServerMissingError(error)));
  });
  await spawned;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (exited) throw new Error(`redis-server exited at start-up on port ${port}`);
    if (await ping(port)) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

module.exports = { startRedisServer, freePort, RedisServerMissingError, REDIS_SERVER_BIN };
