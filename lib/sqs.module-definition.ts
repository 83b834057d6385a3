import { ConfigurableModuleBuilder } from '@nestjs/common';
import { SQS_MODULE_OPTIONS } from './sqs/sqs.constants';
import type { SqsModuleOptions } from './sqs/sqs-module-options.interface';

export const { ConfigurableModuleClass: ConfigurableSqsModule } =
  new ConfigurableModuleBuilder<SqsModuleOptions>({
    moduleName: 'Sqs',
    optionsInjectionToken: SQS_MODULE_OPTIONS,
  })
    .setClassMethodName('forRoot')
    .setFactoryMethodName('createSqsOptions')
    // One SQS configuration per app, visible to the record pipeline wherever it is imported from.
    .setExtras({}, (definition) => ({
      ...definition,
      global: true,
      exports: [...(definition.exports ?? []), SQS_MODULE_OPTIONS],
    }))
    .build();
