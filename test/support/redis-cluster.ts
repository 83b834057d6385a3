import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RedisServerHandle, startRedisServer } from './redis-server';

const run = promisify(execFile);

/** A local Redis Cluster of private redis-servers, started and torn down by a test. */
export interface RedisClusterHandle {
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/**
 * Starts `masters` cluster-enabled redis-servers on free ports (each also needs port + 10000 for
 * the cluster bus), joins them with `redis-cli --cluster create` (no replicas) and waits until every
 * node reports `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'redis-cluster-'));
  const servers: RedisServerHandle[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort();
      servers.push(
        await startRedisServer({
          port,
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout',
            '3000',
            '--dir',
            dir,
          ],
        }),
      );
    }
    const addresses = servers.map((server) => `127.0.0.1:${server.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    for (const server of servers) await waitForClusterOk(server.port);
    return { nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForClusterOk(port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
    if (/cluster_state:ok/.test(stdout)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis cluster node ${port} never reached cluster_state:ok`);
}

/** A free port whose cluster bus port (+10000) is free too. */
async function clusterPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = (await listenFree(0))!;
    if (port + 10_000 <= 65_535 && (await listenFree(port + 10_000)) !== undefined) return port;
  }
  throw new Error('no free port pair for a redis cluster node');
}

/** Binds and releases `port` (0: any); `undefined` when it is taken. */
function listenFree(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}
