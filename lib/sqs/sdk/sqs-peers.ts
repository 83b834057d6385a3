import { optionalPeer } from '../../common/optional-peer';

/** The polling host's optional peers, loaded on first use. */
export const loadSqsSdk = optionalPeer(
  '@aws-sdk/client-sqs',
  'SqsModule polling',
  () => import('@aws-sdk/client-sqs'),
);
export const loadSqsConsumer = optionalPeer(
  'sqs-consumer',
  'SqsModule polling',
  () => import('sqs-consumer'),
);

/** The SNS client, for `SqsProducer.publish()` only. */
export const loadSnsSdk = optionalPeer(
  '@aws-sdk/client-sns',
  'SqsProducer.publish (SNS)',
  () => import('@aws-sdk/client-sns'),
);
