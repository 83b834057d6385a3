import { Inject } from '@nestjs/common';
import { IdempotencyStore } from './idempotency-store.interface';

/** Injects the configured {@link IdempotencyStore}: `@InjectIdempotencyStore() private readonly store: IdempotencyStore`. */
export const InjectIdempotencyStore = (): PropertyDecorator & ParameterDecorator => Inject(IdempotencyStore);

/** The DI token of the store, for `moduleRef.get(getIdempotencyStoreToken())` and custom providers. */
export const getIdempotencyStoreToken = (): symbol => IdempotencyStore;
