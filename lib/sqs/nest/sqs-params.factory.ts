/** SQS handler parameter kinds, numbered as `@Payload()` (3) and `@Ctx()` (6), so those work too. */
export enum SqsParamtype {
  PAYLOAD = 3,
  CONTEXT = 6,
}

/** Maps a parameter kind to its value in the `(event, ctx)` call of an SQS handler. */
class SqsParamsFactory {
  exchangeKeyForValue(type: number, data: unknown, args: unknown[]): unknown {
    switch (type) {
      case SqsParamtype.PAYLOAD: {
        const event = args[0] as Record<string, unknown> | undefined;
        return typeof data === 'string' && event != null ? event[data] : event;
      }
      case SqsParamtype.CONTEXT:
        return args[1];
      default:
        return undefined;
    }
  }
}

/** The one factory (it holds nothing): Nest's path and the direct path read parameters alike. */
export const SQS_PARAMS_FACTORY = new SqsParamsFactory();
