import { MissingPeerDependencyError, optionalPeer } from './optional-peer';

/** `@opentelemetry/api`'s namespace, as the tracing parts take it (they never import it themselves). */
export type OpenTelemetryApi = typeof import('@opentelemetry/api');

const loadOpenTelemetry = optionalPeer(
  '@opentelemetry/api',
  'OpenTelemetry tracing',
  () => import('@opentelemetry/api'),
);

/**
 * The OpenTelemetry API where tracing would record something: the package is installed and an SDK
 * has registered a global tracer provider by now (the app starts its SDK before Nest, as every
 * instrumentation asks). Else `undefined`, and the caller loads none of its tracing code: a no-op
 * tracer's spans would still cost every record an allocation for nothing.
 */
export async function registeredTracerApi(): Promise<OpenTelemetryApi | undefined> {
  const api = await loadOpenTelemetry().catch((error: unknown) => {
    if (error instanceof MissingPeerDependencyError) return undefined;
    throw error;
  });
  if (api === undefined) return undefined;
  // The global provider is a proxy; without a registered SDK it delegates to the API's no-op provider,
  // which a fresh proxy answers too (the API exports neither the no-op class nor its instance).
  const provider = api.trace.getTracerProvider();
  const delegate = provider instanceof api.ProxyTracerProvider ? provider.getDelegate() : provider;
  return delegate === new api.ProxyTracerProvider().getDelegate() ? undefined : api;
}
