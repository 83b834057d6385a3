import { createServer, Server, Socket, connect } from 'node:net';

/**
 * A TCP proxy in front of a server (fauxqs) that can fail the way a network does: refuse
 * connections (nothing listens; open connections are cut), and delay every chunk in both
 * directions. Put its `url` where a client's endpoint goes.
 */
export class TcpFaultProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private delayMs = 0;

  private constructor(
    private readonly target: { host: string; port: number },
    readonly port: number,
  ) {}

  /** Starts a proxy to `targetUrl` (e.g. `http://127.0.0.1:4566`) on a free port. */
  static async start(targetUrl: string): Promise<TcpFaultProxy> {
    const { hostname, port } = new URL(targetUrl);
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port: free } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const proxy = new TcpFaultProxy({ host: hostname, port: Number(port) }, free);
    await proxy.up();
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Accepts connections again (on the same port). */
  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => this.pipe(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Refuses new connections (ECONNREFUSED) and cuts the open ones. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Delays every chunk, both ways, by `ms` (0: none). */
  latency(ms: number): void {
    this.delayMs = ms;
  }

  close(): Promise<void> {
    return this.down();
  }

  private pipe(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(from);
      from.on('data', (chunk) => {
        // Equal delays fire in order, so the byte stream stays ordered.
        if (this.delayMs === 0) to.write(chunk);
        else setTimeout(() => to.writable && to.write(chunk), this.delayMs);
      });
      from.on('end', () => setTimeout(() => to.end(), this.delayMs));
      from.on('error', () => to.destroy());
      from.on('close', () => {
        this.sockets.delete(from);
        to.destroy();
      });
    }
  }
}
