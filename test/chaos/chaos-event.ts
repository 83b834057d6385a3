import { IsBoolean, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { SqsEvent } from '../../lib';

/**
 * The one event of the chaos run. `id` is the idempotency key (the producer's logical event id,
 * the same in every copy of the event); `workMs` is how long the handler works before its effect;
 * `poison` makes every attempt fail, so the event must end in the dead-letter queue, never applied.
 */
@SqsEvent('chaos_event')
export class ChaosEvent {
  @IsString() id!: string;
  @IsInt() @Min(0) @Max(60_000) workMs!: number;
  @IsOptional() @IsBoolean() poison?: boolean;
}

/** The body of one copy of an event, as the producer sends it. */
export function chaosEventBody(event: { id: string; workMs: number; poison?: boolean }): string {
  return JSON.stringify({ type: 'chaos_event', ...event });
}
