import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';
import type { SqsClientLike, SqsClientOption } from '../sqs-module-options.interface';
import { loadSqsSdk } from './sqs-peers';

/**
 * The polling host's SQS clients: a user's client is used and never destroyed; a configuration
 * becomes a client the module owns, one per configuration object (queues share its pool).
 */
export class SqsClientFactory {
  private readonly built = new Map<SqsClientOption | undefined, SQSClient>();

  /** The client for a queue: its own `client`, else the module's, else the SDK's defaults. */
  async clientFor(option: SqsClientOption | undefined): Promise<SQSClient> {
    if (isSqsClient(option)) return option;
    let client = this.built.get(option);
    if (client === undefined) {
      const { SQSClient } = await loadSqsSdk();
      // An explicit `endpoint` in the configuration wins over the queue URL's host (the SDK only
      // reroutes to the queue URL when no endpoint is set), which emulators rely on.
      client = new SQSClient({ ...(option as SQSClientConfig | undefined) });
      this.built.set(option, client);
    }
    return client;
  }

  /** Destroys the clients this factory built (their sockets would keep the process alive). */
  destroy(): void {
    for (const client of this.built.values()) client.destroy();
    this.built.clear();
  }
}

/** True for a client instance (anything with `send`), as opposed to a configuration object. */
export function isSqsClient(option: SqsClientOption | undefined): option is SqsClientLike & SQSClient {
  return typeof (option as { send?: unknown } | undefined)?.send === 'function';
}
