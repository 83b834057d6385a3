import { DynamicModule, Module, Type } from '@nestjs/common';
import { SQS_LAMBDA_HOST } from '../sqs/sqs.constants';
import { SqsCoreModule } from '../sqs/sqs-core.module';

/** A Lambda sandbox's root: the user's module, the record pipeline, and the flag that keeps pollers off. */
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
