import { Injectable } from '@nestjs/common';

/** How the simulated warehouse treats an order (set by the demo's producer plan). */
export interface WarehouseBehaviour {
  /** Milliseconds a shipment takes. */
  latencyMs: number;
  /** Attempts that fail before one succeeds ("warehouse busy"). */
  transientFailures: number;
}

/**
 * The side effect the demo protects: shipping an order. It counts shipments per order, which is
 * how the demo proves "exactly once"; it never checks whether an order already shipped (that is the
 * idempotency layer's job). One instance is shared by every worker, as a real warehouse would be.
 */
@Injectable()
export class Warehouse {
  private readonly shipments = new Map<string, number>();
  private readonly behaviour = new Map<string, WarehouseBehaviour>();
  private readonly defaultBehaviour: WarehouseBehaviour = { latencyMs: 5, transientFailures: 0 };

  /** Scripts how one order behaves. */
  plan(orderId: string, behaviour: WarehouseBehaviour): void {
    this.behaviour.set(orderId, { ...behaviour });
  }

  async ship(orderId: string): Promise<void> {
    const behaviour = this.behaviour.get(orderId) ?? this.defaultBehaviour;
    await new Promise((resolve) => setTimeout(resolve, behaviour.latencyMs));
    if (behaviour.transientFailures > 0) {
      behaviour.transientFailures--;
      throw new Error(`warehouse busy, order ${orderId} not shipped`);
    }
    this.shipments.set(orderId, (this.shipments.get(orderId) ?? 0) + 1);
  }

  /** Shipments of one order. */
  shipmentsOf(orderId: string): number {
    return this.shipments.get(orderId) ?? 0;
  }

  /** Orders shipped at least once. */
  get shippedOrders(): number {
    return this.shipments.size;
  }
}
