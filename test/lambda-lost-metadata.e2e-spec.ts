import { Inject, Injectable, Module } from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  createSqsLambdaHandler,
  Idempotent,
  IdempotencyModule,
  SqsConfigurationError,
  SqsEvent,
  SqsLambdaHandler,
  SqsMessageHandler,
  SqsModule,
} from '../lib';
import { buildLambdaContext, buildSqsEvent, buildSqsRecord } from '../lib/testing';

/**
 * A bundle built by esbuild straight from TypeScript has no `design:paramtypes` metadata: Nest then
 * constructs providers with no arguments. The Lambda host refuses to start, saying so, instead of
 * answering every record with "Cannot read properties of undefined". Simulated here by deleting the
 * metadata ts-jest emitted, as esbuild never writes it.
 */

@SqsEvent('parcel_sent')
class ParcelSent {
  @IsString() id!: string;
}

@Injectable()
class Warehouse {
  readonly sent: string[] = [];
  async ship(id: string): Promise<void> {
    this.sent.push(id);
  }
}

const CARRIER = 'CARRIER';

@Injectable()
class ParcelsHandler {
  constructor(private readonly warehouse: Warehouse) {}

  @SqsMessageHandler(ParcelSent)
  @Idempotent()
  async onSent(event: ParcelSent): Promise<void> {
    await this.warehouse.ship(event.id);
  }
}

@Module({
  imports: [IdempotencyModule.forRoot({}), SqsModule.forRoot({})],
  providers: [ParcelsHandler, Warehouse],
})
class ParcelsModule {}

const event = () => buildSqsEvent([buildSqsRecord({ type: 'parcel_sent', id: 'p-1' }, { queue: 'parcels' })]);
const paramtypes = Reflect.getMetadata('design:paramtypes', ParcelsHandler) as unknown[];

describe('createSqsLambdaHandler, a bundle without decorator metadata', () => {
  let handler: SqsLambdaHandler | undefined;
  afterEach(async () => {
    Reflect.defineMetadata('design:paramtypes', paramtypes, ParcelsHandler);
    await handler?.close();
  });

  it('runs the app whose classes carry their metadata (no false alarm on Nest’s or the library’s providers)', async () => {
    handler = createSqsLambdaHandler(ParcelsModule, { nestOptions: { logger: false } });
    await expect(handler(event(), buildLambdaContext())).resolves.toEqual({ batchItemFailures: [] });
  });

  it('refuses to start, naming the provider and what to do, in one sentence', async () => {
    Reflect.deleteMetadata('design:paramtypes', ParcelsHandler);
    handler = createSqsLambdaHandler(ParcelsModule, { nestOptions: { logger: false } });
    const failure = await handler(event(), buildLambdaContext()).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SqsConfigurationError);
    const message = (failure as Error).message;
    expect(message).toMatch(
      /^ParcelsHandler was constructed without its 1 constructor dependency, because its class carries no decorator metadata .*compile the app with tsc before bundling it \(docs\/hosts\/lambda\.md, "Bundling and deploying"\)\.$/,
    );
    expect(message.match(/\.(\s|$)/g)).toHaveLength(1);
  });

  it('accepts a class whose every constructor parameter is declared with @Inject()', async () => {
    @Injectable()
    class Declared {
      constructor(@Inject(CARRIER) readonly carrier: string) {}
    }
    Reflect.deleteMetadata('design:paramtypes', Declared);
    @Module({ imports: [ParcelsModule], providers: [Declared, { provide: CARRIER, useValue: 'post' }] })
    class WithDeclared {}
    handler = createSqsLambdaHandler(WithDeclared, { nestOptions: { logger: false } });
    await expect(handler(event(), buildLambdaContext())).resolves.toEqual({ batchItemFailures: [] });
  });
});
