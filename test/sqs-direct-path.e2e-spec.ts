import {
  ArgumentsHost,
  CallHandler,
  CanActivate,
  Catch,
  createParamDecorator,
  ExceptionFilter,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  PipeTransform,
  Provider,
  Scope,
  Type,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import * as nestConstants from '@nestjs/common/constants';
import { IsString } from 'class-validator';
import { of } from 'rxjs';
import {
  Idempotent,
  IdempotencyKey,
  IdempotencyModule,
  InMemoryIdempotencyStore,
  SkipMessageException,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { SqsTestClient } from '../lib/testing';
import {
  NEST_CUSTOM_ROUTE_ARGS_METADATA,
  NEST_ENHANCER_METADATA,
} from '../lib/common/nest-enhancer-internals';
import { SqsHandlerExplorer } from '../lib/sqs/nest/sqs-handler.explorer';
import { CapturingLogger } from './support/capturing-logger';
import { createTestApp } from './support/test-app';

/**
 * Which path an SQS handler call takes (`lib/sqs/nest/sqs-direct-call.ts`): direct when `@Idempotent()`
 * is its only enhancer, Nest's pipeline as soon as a guard, interceptor, pipe or filter applies at
 * any level (method, class, global), and the enhancer then runs. The contract suite itself runs on
 * both paths (`idempotency-contract*.e2e-spec.ts`).
 */

const trail: string[] = [];

@SqsEvent('path_probe')
class PathProbe {
  @IsString() id!: string;
}

@Injectable()
class TrailGuard implements CanActivate {
  canActivate(): boolean {
    trail.push('guard');
    return true;
  }
}

@Injectable()
class TrailInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    trail.push('interceptor');
    return next.handle();
  }
}

class TrailPipe implements PipeTransform {
  transform(value: unknown): unknown {
    trail.push('pipe');
    return value;
  }
}

class Refused extends Error {}

@Catch(Refused)
class TrailFilter implements ExceptionFilter {
  catch(error: Refused, _host: ArgumentsHost): never {
    trail.push('filter');
    throw new SkipMessageException(error.message);
  }
}

/** The handler every case runs: it refuses the id `refuse`, which only a filter turns into a skip. */
function handle(event: PathProbe): void {
  trail.push('handler');
  if (event.id === 'refuse') throw new Refused('refused');
}

@Injectable()
class OnlyIdempotent {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
class Plain {
  @SqsMessageHandler(PathProbe)
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
class MethodGuard {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  @UseGuards(TrailGuard)
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
class MethodInterceptor {
  @SqsMessageHandler(PathProbe)
  @UseInterceptors(TrailInterceptor)
  @Idempotent()
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
class MethodPipe {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  @UsePipes(TrailPipe)
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
class MethodFilter {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  @UseFilters(TrailFilter)
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
@UseGuards(TrailGuard)
class ClassGuard {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
@UseInterceptors(TrailInterceptor)
class ClassInterceptor {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
@UsePipes(TrailPipe)
class ClassPipe {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

@Injectable()
@UseFilters(TrailFilter)
class ClassFilter {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  onProbe(event: PathProbe): void {
    handle(event);
  }
}

const TrailParam = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => context.getArgByIndex<PathProbe>(0).id,
);

@Injectable()
class ParamPipe {
  @SqsMessageHandler(PathProbe)
  @Idempotent()
  onProbe(event: PathProbe, _ctx: SqsContext, @TrailParam(TrailPipe) _id?: string): void {
    handle(event);
  }
}

@Injectable()
@Idempotent()
class IdempotentTwice {
  runs = 0;

  @SqsMessageHandler(PathProbe)
  @Idempotent({ ttl: 5_000 })
  onProbe(event: PathProbe): void {
    this.runs++;
    handle(event);
  }
}

/** The handler's class and the enhancer it must see run on Nest's path. */
const NEST_CASES: Array<[string, Type<unknown>, Provider[], string]> = [
  ['a method guard', MethodGuard, [], 'guard'],
  ['a method interceptor', MethodInterceptor, [], 'interceptor'],
  ['a method pipe', MethodPipe, [], 'pipe'],
  ['a method filter', MethodFilter, [], 'filter'],
  ['a class guard', ClassGuard, [], 'guard'],
  ['a class interceptor', ClassInterceptor, [], 'interceptor'],
  ['a class pipe', ClassPipe, [], 'pipe'],
  ['a class filter', ClassFilter, [], 'filter'],
  ['a parameter pipe', ParamPipe, [], 'pipe'],
  ['a global guard (APP_GUARD)', OnlyIdempotent, [{ provide: APP_GUARD, useClass: TrailGuard }], 'guard'],
  [
    'a global interceptor (APP_INTERCEPTOR)',
    OnlyIdempotent,
    [{ provide: APP_INTERCEPTOR, useClass: TrailInterceptor }],
    'interceptor',
  ],
  ['a global pipe (APP_PIPE)', OnlyIdempotent, [{ provide: APP_PIPE, useClass: TrailPipe }], 'pipe'],
  [
    'a global filter (APP_FILTER)',
    OnlyIdempotent,
    [{ provide: APP_FILTER, useClass: TrailFilter }],
    'filter',
  ],
];

describe('the direct path of SQS handler calls', () => {
  beforeEach(() => (trail.length = 0));

  async function appWith(handlerClass: Type<unknown>, providers: Provider[] = []) {
    const app = await createTestApp({ providers: [handlerClass, ...providers] });
    const path = () => app.get(SqsHandlerExplorer).getHandlers()[0].path;
    return { app, path };
  }

  it("reads Nest's own metadata keys", () => {
    expect(NEST_ENHANCER_METADATA).toEqual({
      guards: nestConstants.GUARDS_METADATA,
      interceptors: nestConstants.INTERCEPTORS_METADATA,
      pipes: nestConstants.PIPES_METADATA,
      filters: nestConstants.EXCEPTION_FILTERS_METADATA,
    });
    expect(NEST_CUSTOM_ROUTE_ARGS_METADATA).toBe(nestConstants.CUSTOM_ROUTE_ARGS_METADATA);
  });

  it('is taken when @Idempotent() is the only enhancer, and when there is none', async () => {
    for (const handlerClass of [OnlyIdempotent, Plain]) {
      const { app, path } = await appWith(handlerClass);
      expect(path()).toBeUndefined(); // decided on the first call
      expect((await app.sqs.send({ type: 'path_probe', id: 'p1' })).status).toBe('OK');
      expect(path()).toBe('direct');
      expect((await app.sqs.send({ type: 'path_probe', id: 'refuse' })).status).toBe('FAILED');
      await app.close();
    }
    expect(trail).toEqual(['handler', 'handler', 'handler', 'handler']);
  });

  it.each([
    ['direct', false],
    ['nest', true],
  ])('%s: @Idempotent() on the class and the method claims once', async (expected, nestPipeline) => {
    const app = await createTestApp({ providers: [IdempotentTwice], nestPipeline });
    expect((await app.sqs.send({ type: 'path_probe', id: 't1' })).status).toBe('OK');
    const again = await app.sqs.send({ type: 'path_probe', id: 't1' });
    expect(again.status).toBe('DUPLICATE');
    expect(again.result.key).toBe('t1');
    expect(app.get(IdempotentTwice).runs).toBe(1);
    expect(app.get(SqsHandlerExplorer).getHandlers()[0].path).toBe(expected);
    await app.close();
  });

  it.each(NEST_CASES)(
    'is not taken with %s, which then runs',
    async (_label, handlerClass, providers, enhancer) => {
      const { app, path } = await appWith(handlerClass, providers);
      const sent = await app.sqs.send({ type: 'path_probe', id: enhancer === 'filter' ? 'refuse' : 'p1' });
      expect(path()).toBe('nest');
      expect(sent.status).toBe(enhancer === 'filter' ? 'SKIPPED' : 'OK');
      expect(trail).toContain(enhancer);
      expect(trail).toContain('handler');
      await app.close();
    },
  );

  it('is not taken with a request-scoped global enhancer (which Nest itself leaves out of a static call)', async () => {
    const { app, path } = await appWith(OnlyIdempotent, [
      { provide: APP_INTERCEPTOR, useClass: TrailInterceptor, scope: Scope.REQUEST },
    ]);
    expect((await app.sqs.send({ type: 'path_probe', id: 'p1' })).status).toBe('OK');
    expect(path()).toBe('nest');
    await app.close();
  });

  it('sees a global interceptor registered after init, before the first record', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store: new InMemoryIdempotencyStore() }), SqsModule.forRoot({})],
      providers: [OnlyIdempotent],
    })
      .setLogger(new CapturingLogger())
      .compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    app.useGlobalInterceptors(new TrailInterceptor());
    const sqs = new SqsTestClient(app);
    expect((await sqs.send({ type: 'path_probe', id: 'p1' })).status).toBe('OK');
    expect(app.get(SqsHandlerExplorer).getHandlers()[0].path).toBe('nest');
    expect(trail).toEqual(['interceptor', 'handler']);
    await app.close();
  });
});

// What the direct path does that Nest's pipeline does too: custom parameter decorators (sync and
// async), @IdempotencyKey() inside the claim, observables consumed inside the claim.

const AsyncId = createParamDecorator(async (_data: unknown, context: ExecutionContext) => {
  await Promise.resolve();
  return `async:${context.switchToRpc().getData<PathProbe>().id}:${context.getType()}`;
});

@Injectable()
class Decorated {
  readonly seen: unknown[] = [];

  @SqsMessageHandler(PathProbe)
  @Idempotent()
  onProbe(
    @AsyncId() asyncId: string,
    ctx: SqsContext,
    @IdempotencyKey() key: string | undefined,
    event?: PathProbe,
  ) {
    this.seen.push({ asyncId, key, stateKey: ctx.state.idempotencyKey, event });
    return of('a', 'b');
  }
}

/** A provider that inherits its handler, parameter decorators and all, from a class it extends. */
@Injectable()
class InheritsDecorated extends Decorated {}

describe('parameters and results on both paths', () => {
  it.each([
    ['direct', false],
    ['nest', true],
  ])('%s: custom decorators, @IdempotencyKey() and an observable result', async (expected, nestPipeline) => {
    const app = await createTestApp({ providers: [Decorated], nestPipeline });
    expect((await app.sqs.send({ type: 'path_probe', id: 'd1' })).status).toBe('OK');
    expect((await app.sqs.send({ type: 'path_probe', id: 'd1' })).status).toBe('DUPLICATE');
    expect(app.get(SqsHandlerExplorer).getHandlers()[0].path).toBe(expected);
    // The undecorated parameter at index 3 gets nothing, as on Nest's path.
    expect(app.get(Decorated).seen).toEqual([
      { asyncId: 'async:d1:sqs', key: 'd1', stateKey: 'd1', event: undefined },
    ]);
    await app.close();
  });

  it.each([
    ['direct', false],
    ['nest', true],
  ])(
    '%s: a handler inherited from the class a provider extends reads its parameters',
    async (expected, nestPipeline) => {
      const app = await createTestApp({ providers: [InheritsDecorated], nestPipeline });
      expect((await app.sqs.send({ type: 'path_probe', id: 'i1' })).status).toBe('OK');
      expect(app.get(SqsHandlerExplorer).getHandlers()[0].path).toBe(expected);
      expect(app.get(InheritsDecorated).seen).toEqual([
        { asyncId: 'async:i1:sqs', key: 'i1', stateKey: 'i1', event: undefined },
      ]);
      await app.close();
    },
  );
});
