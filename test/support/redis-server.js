// Starts a private redis-server on a free port, so tests never touch a shared Redis.
// Plain CommonJS so both the Jest global setup (.mjs) and TypeScript tests can use it.
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');

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
    'redis-server',
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
  let exited = false;
  child.on('exit', () => (exited = true));
  const spawned = new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) =>
      reject(new Error(`cannot start redis-server (${error.message}); install it or set REDIS_URL`)),
    );
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

module.exports = { startRedisServer, freePort };
