import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IDEMPOTENCY_MODULE_OPTIONS, IDEMPOTENT_METADATA } from './idempotency.constants';
import { discoverMethods, messageTypeOf } from './handler-discovery';
import { IdempotencyConfigurationError } from '../common/sqs-idempotency.error';
import type { IdempotentOptions, ResolvedIdempotencyOptions } from './idempotency-options.interface';
import { buildIdempotencyPolicy, IdempotencyPolicy } from './idempotency-policy';

/**
 * Every `@Idempotent()` handler's policy, resolved at bootstrap (so bad declarations stop the start)
 * and refusing two handlers in one dedup scope, where the second would skip the first one's events.
 */
@Injectable()
export class IdempotentHandlerRegistry implements OnModuleInit {
  private readonly logger = new Logger('Idempotency');
  /** What the declarations earned at bootstrap, logged as warnings (kept for `SqsTestClient.startupWarnings`). */
  readonly startupWarnings: string[] = [];
  /**
   * Each handler asked about, by class and then method: its policy, or `null` when it is not an
   * idempotent message handler. By class too: subclasses inheriting one handler method are handlers
   * of their own, each with its class-level `@Idempotent()` options.
   */
  private readonly policiesByClass = new Map<Function, Map<Function, IdempotencyPolicy | null>>();

  constructor(
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: ResolvedIdempotencyOptions,
    private readonly discovery: DiscoveryService,
    private readonly metadataScanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    // By policy, one per class and method, not by name: two classes of one name in two modules, or two
    // subclasses inheriting one method, are two handlers (two instances of one class are one).
    const owners = new Map<string, IdempotencyPolicy>();
    for (const { instance, method } of discoverMethods(this.discovery, this.metadataScanner)) {
      if (typeof method !== 'function') continue;
      const policy = this.policyFor(method, instance.constructor as Function);
      if (!policy) continue;
      const owner = owners.get(policy.scope);
      if (owner !== undefined && owner !== policy) throw sharedScopeError(owner, policy);
      owners.set(policy.scope, policy);
    }
  }

  private warn(message: string): void {
    this.logger.warn(message);
    this.startupWarnings.push(message);
  }

  /** Every idempotent handler's policy resolved so far (all of them after bootstrap). */
  policies(): IdempotencyPolicy[] {
    const found: IdempotencyPolicy[] = [];
    for (const policies of this.policiesByClass.values()) {
      for (const policy of policies.values()) if (policy !== null) found.push(policy);
    }
    return found;
  }

  /**
   * The policy of `handler` called on an instance of `classRef`, or `undefined` when it is no
   * idempotent message handler; cached (after bootstrap, two lookups and no allocation per call).
   */
  policyFor(handler: Function, classRef: Function): IdempotencyPolicy | undefined {
    let policies = this.policiesByClass.get(classRef);
    const cached = policies?.get(handler);
    if (cached !== undefined) return cached ?? undefined;
    const policy = this.resolvePolicy(handler, classRef);
    // A handler that is not an idempotent message handler is remembered too: an HTTP route under
    // @Idempotent() asks on every call, and its warning is said once, at bootstrap.
    if (policies === undefined) this.policiesByClass.set(classRef, (policies = new Map()));
    policies.set(handler, policy ?? null);
    return policy;
  }

  private resolvePolicy(handler: Function, classRef: Function): IdempotencyPolicy | undefined {
    const declared = this.reflector.getAllAndOverride<IdempotentOptions | undefined>(IDEMPOTENT_METADATA, [
      handler,
      classRef,
    ]);
    if (declared === undefined) return undefined;
    const handlerName = `${classRef.name}.${handler.name}`;
    const eventType = messageTypeOf(handler);
    if (eventType === undefined) {
      if (Reflect.hasOwnMetadata(IDEMPOTENT_METADATA, handler)) {
        this.warn(
          `@Idempotent() on ${handlerName} has no effect: it is not an @SqsMessageHandler() or @EventPattern() handler.`,
        );
      }
      return undefined;
    }
    // Its key path is checked by its host, which knows its event class and queues (`event-key-path.check.ts`).
    return buildIdempotencyPolicy(this.options, declared, handlerName, eventType);
  }
}

/** Two handlers in one dedup scope: suggests a scope for each, named after what tells them apart. */
function sharedScopeError(
  first: IdempotencyPolicy,
  second: IdempotencyPolicy,
): IdempotencyConfigurationError {
  const names = [first, second].map(({ handlerName }) => {
    const dot = handlerName.lastIndexOf('.');
    return { owner: handlerName.slice(0, dot), method: handlerName.slice(dot + 1) };
  });
  const labels =
    names[0].method !== names[1].method
      ? names.map(({ method }) => method)
      : names[0].owner !== names[1].owner
        ? names.map(({ owner }) => owner.charAt(0).toLowerCase() + owner.slice(1))
        : ['first', 'second'];
  const suggest = (policy: IdempotencyPolicy, label: string) =>
    `@Idempotent({ scope: '${policy.eventType}.${label}' }) on ${policy.handlerName}`;
  // Both types, when they differ: the scope was shared on purpose or by mistake, and either way the
  // reader must see which two events collide.
  const handled =
    first.eventType === second.eventType
      ? `handlers of "${second.eventType}"`
      : `handlers, of "${first.eventType}" and of "${second.eventType}",`;
  return new IdempotencyConfigurationError(
    `${first.handlerName} and ${second.handlerName} are both @Idempotent() ${handled} in one ` +
      `dedup scope "${second.scope}": the second would skip every event whose key the first completed. ` +
      `Give each a distinct scope, e.g. ${suggest(first, labels[0])} and ${suggest(second, labels[1])}.`,
  );
}
