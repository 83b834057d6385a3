import { Inject } from '@nestjs/common';
import { IdempotencyStore } from './idempotency-store.interface';

/** Injects the configured {@link IdempotencyStore}: `@InjectIdempotencyStore() private readonly store: IdempotencyStore`. */
export const InjectIdempotencyStore = (): PropertyDecorator & ParameterDecorator => Inject(IdempotencyStore);
