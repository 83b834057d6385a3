import {
  ArgumentsHost,
  CallHandler,
  CanActivate,
  Catch,
  ExceptionFilter,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  PipeTransform,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { IsString } from 'class-validator';
import { Observable, tap } from 'rxjs';
import {
  Idempotent,
  IdempotencyKey,
  isSqsContext,
  SkipMessageException,
  SqsContext,
  SqsEvent,
  SqsMessageHandler,
} from '../lib';
import { createTestApp } from './support/test-app';

/** Handlers run through Nest's enhancer pipeline with context type 'sqs'. */

const trail: string[] = [];

@SqsEvent('note_added')
class NoteAdded {
  @IsString() id!: string;
  @IsString() text!: string;
}

@Injectable()
class GlobalInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    trail.push(`global-interceptor:${context.getType()}:${context.getHandler().name}`);
    return next.handle().pipe(tap(() => trail.push('global-interceptor:after')));
  }
}

/** A global HTTP-style guard that steps aside for queue handlers. */
@Injectable()
class JwtLikeGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (isSqsContext(context)) return true;
    return Boolean(context.switchToHttp().getRequest()?.headers?.authorization);
  }
}

@Injectable()
class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const ctx = context.getArgByIndex<SqsContext>(1);
    trail.push(`guard:${ctx.messageId === undefined ? 'no-ctx' : 'ctx'}`);
    return context.getArgByIndex<NoteAdded>(0).text !== 'forbidden';
  }
}

@Injectable()
class KeyReader implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // Registered after the idempotency interceptor, so it runs inside the claim and sees the key.
    trail.push(`key-reader:${context.getArgByIndex<SqsContext>(1).state.idempotencyKey}`);
    return next.handle();
  }
}

class UpperCasePipe implements PipeTransform {
  transform(value: unknown): unknown {
    return value instanceof NoteAdded ? Object.assign(value, { text: value.text.toUpperCase() }) : value;
  }
}

class DomainError extends Error {}

@Catch(DomainError)
class DomainErrorToSkip implements ExceptionFilter {
  catch(error: DomainError, host: ArgumentsHost): never {
    trail.push(`filter:${host.getType()}`);
    throw new SkipMessageException(`ignored: ${error.message}`);
  }
}

@Injectable()
class NotesHandler {
  readonly received: Array<{ text: string; key?: string; ctxIsContext: boolean }> = [];

  // Nest applies method decorators bottom-up and runs interceptors in registration order, so an
  // interceptor written above @Idempotent() runs inside the claim.
  @SqsMessageHandler(NoteAdded)
  @UseGuards(TenantGuard)
  @UseInterceptors(KeyReader)
  @Idempotent()
  @UsePipes(UpperCasePipe)
  @UseFilters(DomainErrorToSkip)
  async onNote(event: NoteAdded, ctx: SqsContext, @IdempotencyKey() key?: string): Promise<void> {
    trail.push('handler');
    if (event.text === 'DOMAIN') throw new DomainError('not for us');
    this.received.push({ text: event.text, key, ctxIsContext: ctx instanceof SqsContext });
  }
}

describe('Nest enhancers on SQS handlers', () => {
  beforeEach(() => (trail.length = 0));

  async function app() {
    return createTestApp({
      providers: [
        NotesHandler,
        { provide: APP_INTERCEPTOR, useClass: GlobalInterceptor },
        { provide: APP_GUARD, useClass: JwtLikeGuard },
        { provide: APP_PIPE, useValue: new ValidationPipe({ transform: true }) },
      ],
    });
  }

  it('runs global and local guards, interceptors and pipes in Nest order, with context type sqs', async () => {
    const test = await app();
    expect((await test.sqs.send({ id: 'n1', text: 'hello' })).status).toBe('OK');
    expect(trail).toEqual([
      'guard:ctx',
      'global-interceptor:sqs:onNote',
      'key-reader:n1',
      'handler',
      'global-interceptor:after',
    ]);
    expect(test.get(NotesHandler).received).toEqual([{ text: 'HELLO', key: 'n1', ctxIsContext: true }]);
    await test.close();
  });

  it('a guard that denies fails the record before any claim (it is redelivered, then dead-lettered)', async () => {
    const test = await app();
    const denied = await test.sqs.send({ id: 'n2', text: 'forbidden' });
    expect(denied.status).toBe('FAILED');
    expect(denied.result.error?.message).toBe('Forbidden resource');
    expect(denied.result.key).toBeUndefined();
    // Not claimed: the same key can still be handled once the guard allows it.
    expect((await test.sqs.send({ id: 'n2', text: 'allowed' })).status).toBe('OK');
    await test.close();
  });

  it('exception filters apply: a filter may turn an error into an ack', async () => {
    const test = await app();
    const skipped = await test.sqs.send({ id: 'n3', text: 'domain' });
    expect(skipped.status).toBe('SKIPPED');
    expect(trail).toContain('filter:sqs');
    expect(skipped.result.error?.message).toBe('ignored: not for us');
    // Filters run after the claim settled: the handler's error released the key, so a copy runs
    // the handler again (and is skipped again); only a handler-raised skip completes the key.
    trail.length = 0;
    expect((await test.sqs.send({ id: 'n3', text: 'domain' })).status).toBe('SKIPPED');
    expect(trail).toContain('handler');
    await test.close();
  });

  it('a duplicate never reaches the handler but passes through outer interceptors', async () => {
    const test = await app();
    await test.sqs.send({ id: 'n4', text: 'once' });
    trail.length = 0;
    expect((await test.sqs.send({ id: 'n4', text: 'once' })).status).toBe('DUPLICATE');
    expect(trail).toEqual(['guard:ctx', 'global-interceptor:sqs:onNote', 'global-interceptor:after']);
    await test.close();
  });
});
