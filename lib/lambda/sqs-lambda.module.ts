import { DynamicModule, Module, Type } from '@nestjs/common';
import { SQS_LAMBDA_HOST } from '../sqs/sqs.constants';
import { SqsCoreModule } from '../sqs/sqs-core.module';

/**
 * The root module of a Lambda sandbox: the user's module plus the record pipeline (for apps that do
 * not import `SqsModule`), and the global `SQS_LAMBDA_HOST` flag that keeps pollers from starting
 * even when `SqsModule` lists queues.
 */
@Module({})
export class SqsLambdaModule {
  static wrap(appModule: Type<unknown> | DynamicModule): DynamicModule {
    return {
      module: SqsLambdaModule,
      global: true,
      imports: [appModule, SqsCoreModule],
      providers: [{ provide: SQS_LAMBDA_HOST, useValue: true }],
      exports: [SQS_LAMBDA_HOST],
    };
  }
}
