// The Quick start's handler booted by its first invocation (`bootAtInit: false`), as every handler
// was before issue 51: the first batch of the cold-start bench's "after INIT" case, for scale.
import { createSqsLambdaHandler } from 'nestjs-idempotent-sqs';
import { AppModule } from './quick-start/app.module';

export const handler = createSqsLambdaHandler(AppModule, { bootAtInit: false });
