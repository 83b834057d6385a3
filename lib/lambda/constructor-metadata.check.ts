import type { DiscoveryService } from '@nestjs/core';

/**
 * A provider built without its constructor's dependencies (a bundle that dropped TypeScript's
 * decorator metadata) would fail every record: found at bootstrap, and said in one sentence.
 */
export function lostConstructorMetadata(discovery: DiscoveryService): string | undefined {
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    const type = wrapper.metatype;
    // Factories (`inject` set) and values are not constructed from metadata; nor are classes that
    // are not `@Injectable()` or controllers (Nest's own `ModuleRef`), which tsc gives none either.
    if (typeof type !== 'function' || wrapper.inject || type.length === 0) continue;
    if (!Reflect.getMetadata('__injectable__', type) && !Reflect.getMetadata('__controller__', type))
      continue;
    if (Reflect.getMetadata('design:paramtypes', type) !== undefined) continue;
    // `@Inject(token)` on a parameter declares it without the metadata.
    const declared = (Reflect.getMetadata('self:paramtypes', type) ?? []) as unknown[];
    if (declared.length >= type.length) continue;
    const count = type.length === 1 ? '1 constructor dependency' : `${type.length} constructor dependencies`;
    return (
      `${type.name} was constructed without its ${count}, because its class carries no decorator metadata ` +
      '(design:paramtypes, which tsc emits with emitDecoratorMetadata and esbuild or SWC drop): compile the ' +
      'app with tsc before bundling it (docs/hosts/lambda.md, "Bundling and deploying").'
    );
  }
  return undefined;
}
