import { ConfigurableModuleBuilder } from '@nestjs/common';
import { SQS_MODULE_OPTIONS } from './sqs/sqs.constants';
import type { SqsModuleOptions } from './sqs/sqs-module-options.interface';
import { readSqsHostOptions } from './sqs/sqs-options.reader';

/** The options as given: forRoot's (read already), or what forRootAsync's factory returns (a settings class?). */
export const SQS_OPTIONS_GIVEN = Symbol('SQS_OPTIONS_GIVEN');

export const { ConfigurableModuleClass: ConfigurableSqsModule } =
  new ConfigurableModuleBuilder<SqsModuleOptions>({
    moduleName: 'Sqs',
    optionsInjectionToken: SQS_OPTIONS_GIVEN,
  })
    .setClassMethodName('forRoot')
    .setFactoryMethodName('createSqsOptions')
    // One SQS configuration per app, read once (a plain object, checked), visible to the record
    // pipeline wherever it is imported from.
    .setExtras({}, (definition) => ({
      ...definition,
      global: true,
      providers: [
        ...(definition.providers ?? []),
        {
          provide: SQS_MODULE_OPTIONS,
          useFactory: (options?: SqsModuleOptions) => readSqsHostOptions(options, 'SqsModule options'),
          inject: [SQS_OPTIONS_GIVEN],
        },
      ],
      exports: [...(definition.exports ?? []), SQS_MODULE_OPTIONS],
    }))
    .build();
