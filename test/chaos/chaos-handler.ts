import { Inject, Injectable, UseInterceptors } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Idempotent, SqsContext, SqsMessageHandler } from '../../lib';
import { ChaosEvent } from './chaos-event';
import { PoisonChaosError, TransientChaosError } from './chaos-errors';
import { ChaosWindowInterceptor } from './chaos-window.interceptor';
import { ChaosWorkerConfig } from './chaos-worker.config';
import { EffectWindow } from './effect-window';

/** Injection tokens of the worker app. */
export const CHAOS_CONFIG = Symbol('CHAOS_CONFIG');
export const LEDGER = Symbol('LEDGER');
export const CHAOS_RANDOM = Symbol('CHAOS_RANDOM');

/**
 * The handler of the chaos run: works for a while, sometimes fails, and applies its effect (one
 * HINCRBY on the ledger) as its last step.
 */
@Injectable()
export class ChaosHandler {
  constructor(
    @Inject(CHAOS_CONFIG) private readonly config: ChaosWorkerConfig,
    @Inject(LEDGER) private readonly ledger: Redis,
    @Inject(CHAOS_RANDOM) private readonly random: () => number,
    private readonly window: EffectWindow,
  ) {}

  // Decorators apply bottom-up and Nest runs a method's interceptors in the order they were added,
  // so the interceptor written below @Idempotent() is the OUTER one: it sees the whole
  // claim → handler → completion, and knows when the claim is settled.
  @SqsMessageHandler(ChaosEvent)
  @Idempotent()
  @UseInterceptors(ChaosWindowInterceptor)
  async onEvent(event: ChaosEvent, ctx: SqsContext): Promise<void> {
    if (event.workMs > 0) await new Promise((resolve) => setTimeout(resolve, event.workMs));
    if (event.poison) throw new PoisonChaosError(`poison event ${event.id}`);
    if (this.random() < this.config.failureRate) {
      throw new TransientChaosError(`transient failure of ${event.id} (attempt ${ctx.receiveCount})`);
    }
    // The effect, last: one application counted per event.
    await this.window.enter(ctx.state);
    await this.ledger.hincrby(this.config.ledgerKey, event.id, 1);
  }
}
