/**
 * Listeners a store puts on a client it was handed (an ioredis client, a `pg` pool): one listener
 * per event on the client, however many stores share it, each store's own function called from
 * it. Several stores on one client (tests, the conformance kit) then never reach Node's
 * "possible EventEmitter memory leak" warning, and the last store to leave takes the listener off,
 * so the client is the app's again exactly as it was.
 */

/** Anything with Node's `on`/`removeListener` (an `EventEmitter`). */
export interface ClientEvents {
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener?(event: string, listener: (...args: any[]) => void): unknown;
}

type Listener = (...args: any[]) => void;

interface SharedEvent {
  readonly members: Set<Listener>;
  readonly fanOut: Listener;
}

const sharedEvents = new WeakMap<ClientEvents, Map<string, SharedEvent>>();

/**
 * Calls each of `listeners` on its event of `client`; answers the function that stops them. A
 * client without `on` (a test double) is left alone.
 */
export function listenToClient(
  client: ClientEvents,
  listeners: Readonly<Record<string, Listener>>,
): () => void {
  if (typeof client?.on !== 'function') return () => undefined;
  let events = sharedEvents.get(client);
  if (events === undefined) sharedEvents.set(client, (events = new Map()));
  const joined: Array<[SharedEvent, Listener, string]> = [];
  for (const [event, listener] of Object.entries(listeners)) {
    let shared = events.get(event);
    if (shared === undefined) {
      const members = new Set<Listener>();
      shared = { members, fanOut: (...args) => members.forEach((member) => member(...args)) };
      events.set(event, shared);
      client.on(event, shared.fanOut);
    }
    shared.members.add(listener);
    joined.push([shared, listener, event]);
  }
  return () => {
    for (const [shared, listener, event] of joined.splice(0)) {
      shared.members.delete(listener);
      if (shared.members.size > 0 || typeof client.removeListener !== 'function') continue;
      client.removeListener(event, shared.fanOut);
      events!.delete(event);
    }
  };
}
