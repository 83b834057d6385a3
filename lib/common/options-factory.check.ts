import type { DynamicModule } from '@nestjs/common';

/** What `forRootAsync` was given: a class (or an existing provider) whose method makes the options. */
interface OptionsFactorySource {
  useClass?: unknown;
  useExisting?: unknown;
}

/**
 * A `forRootAsync({ useClass })` (or `useExisting`) class without the module's factory method made
 * Nest fail with "optionsFactory[self.factoryClassMethodKey] is not a function", naming neither the
 * class nor the method. The options provider Nest built is wrapped to say both, checked on the
 * instance (a method defined as an arrow property counts), and which method to rename when the class
 * has another module's (`createOptions()`, what `@ssut/nestjs-sqs` and many modules call).
 */
export function requireFactoryMethod(
  definition: DynamicModule,
  options: OptionsFactorySource,
  settings: { token: unknown; method: string; where: string; error: (message: string) => Error },
): DynamicModule {
  const source = options.useClass ?? options.useExisting;
  if (source === undefined) return definition;
  const name = typeof source === 'function' ? source.name : String(source);
  for (const provider of definition.providers ?? []) {
    if (typeof provider !== 'object' || provider.provide !== settings.token || !('useFactory' in provider))
      continue;
    const create = provider.useFactory;
    provider.useFactory = (factory: Record<string, unknown> | undefined, ...rest: unknown[]) => {
      if (typeof factory?.[settings.method] !== 'function') {
        const other = typeof factory?.createOptions === 'function' ? ', but createOptions(): rename it' : '';
        throw settings.error(
          `${settings.where}: ${name} has no ${settings.method}() method${other}. The module calls ` +
            `${settings.method}() of the class given as ${options.useClass ? 'useClass' : 'useExisting'} for its options.`,
        );
      }
      return create(factory, ...rest);
    };
  }
  return definition;
}
