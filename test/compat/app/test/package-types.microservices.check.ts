// Compiled, never run: the declarations of the microservices entry, with skipLibCheck off, in the
// apps that install @nestjs/microservices and sqs-consumer (the bare app installs neither).
import type { SqsServerOptions } from 'nestjs-idempotent-sqs/microservices';
import { SqsRpcContext } from 'nestjs-idempotent-sqs/microservices';

export const serverOptions: SqsServerOptions = { queues: [{ name: 'orders', url: 'https://sqs/1/orders' }] };
export const contextClass: typeof SqsRpcContext = SqsRpcContext;
