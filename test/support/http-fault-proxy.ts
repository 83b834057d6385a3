import { createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An HTTP proxy in front of an AWS-style JSON service (dynalite) that fails the way the service
 * does under load: `throttle` answers every request with the service's own throttling error (as
 * DynamoDB answers a table over its capacity), `hang` accepts requests and never answers (a stuck
 * connection). `pass` forwards. It counts the requests that reached it, retries included.
 */
export class HttpFaultProxy {
  mode: 'pass' | 'throttle' | 'hang' = 'pass';
  /** Requests received, per `X-Amz-Target` operation (`PutItem`, ...). */
  readonly received: Record<string, number> = {};
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly target: URL,
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(targetUrl: string): Promise<HttpFaultProxy> {
    const server = createServer();
    const proxy = new HttpFaultProxy(server, new URL(targetUrl));
    server.on('request', (req, res) => proxy.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Requests received in all. */
  get total(): number {
    return Object.values(this.received).reduce((sum, count) => sum + count, 0);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const operation = String(req.headers['x-amz-target'] ?? '?')
      .split('.')
      .pop()!;
    this.received[operation] = (this.received[operation] ?? 0) + 1;
    if (this.mode === 'hang') return; // read nothing, answer nothing
    if (this.mode === 'throttle') {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
          message: 'The level of configured provisioned throughput for the table was exceeded.',
        }),
      );
      return;
    }
    const upstream = request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}
