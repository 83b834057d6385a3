import type { SqsQueueRouter } from '../routing/sqs-queue.router';

/**
 * A fallback handler beside a queue's one event class, with no discriminator configured, silently
 * narrows what the class receives: alone it would take every message, beside the fallback only bodies
 * whose `type` names it. The start-up warning that says so, or `undefined`. Loaded by `SqsModule`'s queue
 * registry where the app has a fallback handler. `everyQueue`: the router of the handlers bound to none.
 */
export function fallbackBesideOneClass(router: SqsQueueRouter, everyQueue: boolean): string | undefined {
  const { onlyRoute: only, fallbackRoute: fallback } = router;
  if (only?.eventClass === undefined || fallback === undefined || router.discriminatorConfigured) {
    return undefined;
  }
  const queue = everyQueue ? 'every queue' : `queue "${router.queue}"`;
  const fallbackNames = fallback.handlers.map((handler) => handler.name).join(', ');
  return (
    `On ${queue}, ${only.eventClass.name} is the one event class beside the fallback handler ${fallbackNames}: ` +
    `it receives only bodies whose type is "${only.eventType}", and every other body (another type, or none) ` +
    `goes to the fallback. If its producers send no such type, set discriminator: { field: 'type' } to say ` +
    'routing by type is meant, or remove the fallback so the class takes every message.'
  );
}
