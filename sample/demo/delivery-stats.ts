/** What happened to the deliveries of a demo run, counted by `DeliveryStatsInterceptor`. */
export class DeliveryStats {
  /** Every delivery that reached the handler pipeline (a message can be delivered several times). */
  deliveries = 0;
  /** The handler ran and shipped. */
  handled = 0;
  /** Duplicates of a completed event, acked without running the handler. */
  duplicates = 0;
  /** Duplicates of an event still in flight: failed on purpose, redelivered later. */
  inFlightDuplicates = 0;
  /** Handler failures (warehouse busy): the claim is released and SQS redelivers. */
  failures = 0;
  /** Highest ApproximateReceiveCount seen. */
  maxReceiveCount = 0;
}
