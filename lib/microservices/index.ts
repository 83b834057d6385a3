/**
 * `nestjs-idempotent-sqs/microservices`: Amazon SQS as a Nest microservice transport. A separate
 * entry point, so that apps which do not use `@nestjs/microservices` never load it.
 */
export { SqsServer, SQS_TRANSPORT } from './sqs.server';
export type { SqsServerEvents, SqsServerStatus } from './sqs.server';
export { SqsRpcContext } from './sqs-rpc.context';
export type { SqsServerOptions, SqsServerQueueOptions } from './sqs-server-options.interface';
