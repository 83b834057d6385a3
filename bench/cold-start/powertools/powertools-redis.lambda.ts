// Powertools on Redis: its cache persistence layer over @redis/client, connected at start-up as its
// documentation shows (the connection is part of the cold start).
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import { createClient } from '@redis/client';
import { powertoolsHandler } from './powertools-orders';

const client = createClient({ url: process.env.REDIS_URL });
const connected = client.connect();

export const handler = powertoolsHandler(new CachePersistenceLayer({ client }), connected);
