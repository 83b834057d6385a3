import { Injectable } from '@nestjs/common';

/** A message handler a host runs, as the Idempotency Center lists it (idempotent or not). */
export interface CatalogedHandler {
  /** `Class.method`. */
  readonly name: string;
  readonly eventType: string;
  /** The queue it is bound to; `undefined` listens on every queue. */
  readonly queue: string | undefined;
}

/**
 * The message handlers of the app's hosts, for the Center's coverage (which handlers are not
 * `@Idempotent()`, on which queue). The record pipeline registers where its handlers are read
 * (`SqsDispatcher`); the report (`IdempotencyStats`) reads them when asked. The pipeline sits above
 * the counters and their report in the house, so it hands its handlers down here rather than the
 * report reaching up for them.
 */
@Injectable()
export class MessageHandlerCatalog {
  private readonly sources: Array<() => readonly CatalogedHandler[]> = [];

  /** Adds a source of handlers, read each time the catalog is (handlers are discovered at bootstrap). */
  add(source: () => readonly CatalogedHandler[]): void {
    this.sources.push(source);
  }

  /** Every registered handler, source by source, in discovery order. */
  handlers(): CatalogedHandler[] {
    return this.sources.flatMap((source) => source());
  }
}
