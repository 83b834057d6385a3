import { writeSync } from 'node:fs';
import { Injectable } from '@nestjs/common';
import type { SqsContextState } from '../../lib';
import { KILL_LINE } from './chaos-worker.config';

const IN_WINDOW = 'chaosInEffectWindow';

/**
 * Decides when this worker may SIGKILL itself, so that a kill never lands where no idempotency
 * layer can help.
 *
 * The window: from just before the effect is sent (HINCRBY on the ledger) until the claim is
 * settled (`markComplete` answered). A process killed inside it leaves an applied effect under an
 * unfinished claim; after the lease, the redelivery applies it again. Closing that window needs
 * the effect itself to be atomic with the completion (one transaction) or keyed (idempotent on
 * its own); the idempotency layer alone cannot. Every other moment is fair game, and is exactly
 * what the layer must survive: a kill before the effect must leave the event to be applied once
 * by a redelivery after the lease.
 *
 * So on `die`: the next handler that reaches its effect becomes the killer (it is mid-handler,
 * claim held, effect not sent); it waits until no handler of the process is inside the window,
 * and kills the process synchronously. Handlers reaching their effect meanwhile never enter it.
 */
@Injectable()
export class EffectWindow {
  private inside = 0;
  private dying = false;
  private killerChosen = false;
  /** Handler calls between the claim interceptor's start and end (for the kill line). */
  active = 0;

  /** The controller asked for a kill. */
  arm(): void {
    this.dying = true;
  }

  /** Called by the handler right before it sends its effect. Never resolves once dying. */
  async enter(state: SqsContextState): Promise<void> {
    if (this.dying) {
      if (!this.killerChosen) {
        this.killerChosen = true;
        while (this.inside > 0) await new Promise((resolve) => setTimeout(resolve, 1));
        // Synchronous from the check to the kill: nothing can enter the window in between.
        writeSync(2, `${KILL_LINE} pid=${process.pid} handlersInFlight=${this.active}\n`);
        process.kill(process.pid, 'SIGKILL');
      }
      return new Promise<void>(() => undefined);
    }
    this.inside++;
    state[IN_WINDOW] = true;
  }

  /** Called once the claim of this call is settled (completed or released, or the store failed). */
  leave(state: SqsContextState): void {
    if (state[IN_WINDOW] !== true) return;
    state[IN_WINDOW] = false;
    this.inside--;
  }
}
