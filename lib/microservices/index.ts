/**
 * `nestjs-idempotent-sqs/microservices`: SQS as a Nest microservice transport, on its own entry point.
 *
 * @module nestjs-idempotent-sqs/microservices
 */
export { SqsServer, SQS_TRANSPORT, type SqsServerEvents, type SqsServerStatus } from './sqs.server';
export { SqsRpcContext } from './sqs-rpc.context';
export type { SqsServerOptions, SqsServerQueueOptions } from './sqs-server-options.interface';
