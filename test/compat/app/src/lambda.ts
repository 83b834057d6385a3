import { createSqsLambdaHandler } from 'nestjs-idempotent-sqs';
import { AppModule } from './app.module.js';

/** The Lambda entry point, as a user writes it. */
export const handler = createSqsLambdaHandler(AppModule, { nestOptions: { logger: false } });
