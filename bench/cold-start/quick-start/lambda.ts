// The Quick start's src/lambda.ts, as the docs print it.
import { createSqsLambdaHandler } from 'nestjs-idempotent-sqs';
import { AppModule } from './app.module';

// Enable ReportBatchItemFailures on the event source mapping.
export const handler = createSqsLambdaHandler(AppModule);
