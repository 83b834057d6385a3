import type { InjectionToken } from '@nestjs/common';
import type { ModulesContainer } from '@nestjs/core';

/**
 * Puts the module that hosts the consumers first in line when the app closes, and last when it
 * starts.
 *
 * Nest runs `onModuleDestroy` module by module, in ascending `distance` from the root; global
 * modules (SqsModule is one) get the largest distance, so they would close last: the app's own
 * modules would already have closed their database pools and clients while handlers were still
 * running on them. Consumers must instead stop polling and drain their in-flight batches before
 * any other provider is destroyed. The same ordering runs init and bootstrap hooks in descending
 * distance, so the consumers also start only after every other module has bootstrapped.
 *
 * Nest reads the distances once, when the app initialises (`init()`), after every provider is
 * constructed; this must run from a constructor. Returns `false` when the container does not
 * expose distances (a future Nest), in which case the default order applies.
 */
export function runHooksAroundEveryOtherModule(modules: ModulesContainer, provider: InjectionToken): boolean {
  let lowest = Infinity;
  const hosts = [];
  for (const nestModule of modules.values()) {
    if (typeof nestModule.distance !== 'number') return false;
    if (nestModule.providers.has(provider)) hosts.push(nestModule);
    else lowest = Math.min(lowest, nestModule.distance);
  }
  if (hosts.length === 0) return false;
  const distance = Number.isFinite(lowest) ? lowest - 1 : -1;
  for (const host of hosts) host.distance = distance;
  return true;
}
