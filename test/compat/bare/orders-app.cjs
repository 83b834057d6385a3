// The smallest real Lambda app, in plain JavaScript (decorators applied by hand, as tsc would),
// built from whichever copy of the package the caller loaded: check.cjs passes the CommonJS build,
// check.mjs the ES build. Returns the Lambda handler and what its handler recorded.
'use strict';
require('reflect-metadata');

function decorateMethod(decorators, prototype, name) {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
  Object.defineProperty(prototype, name, Reflect.decorate(decorators, prototype, name, descriptor));
}

module.exports = function createOrdersLambda({ common, validator, lib }) {
  class OrderPlaced {}
  Reflect.decorate([validator.IsString()], OrderPlaced.prototype, 'id', undefined);
  Reflect.decorate([validator.IsString()], OrderPlaced.prototype, 'orderId', undefined);
  Reflect.decorate([lib.SqsEvent('order_placed')], OrderPlaced);

  const shipped = [];
  class OrdersHandler {
    async onOrderPlaced(event) {
      shipped.push(event.orderId);
    }
  }
  decorateMethod(
    [lib.SqsMessageHandler(OrderPlaced), lib.Idempotent()],
    OrdersHandler.prototype,
    'onOrderPlaced',
  );
  Reflect.decorate([common.Injectable()], OrdersHandler);

  class AppModule {}
  Reflect.decorate(
    [
      common.Module({
        imports: [lib.IdempotencyModule.forRoot({}), lib.SqsModule.forRoot({})],
        providers: [OrdersHandler],
      }),
    ],
    AppModule,
  );
  const handler = lib.createSqsLambdaHandler(AppModule, { nestOptions: { logger: false } });
  return { handler, shipped };
};
