/**
 * One listener per event on a client many stores share (each store's function called from it), so a
 * shared client never trips Node's leak warning and is left as it was when the last store leaves.
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

/** Calls each listener on its event of `client` (one without `on` is left alone); answers the stop. */
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
