import { context, propagation, trace, type TextMapPropagator } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * A real OpenTelemetry SDK for a spec file: a tracer provider whose finished spans land in memory,
 * registered globally (as an app's SDK does before Nest starts) with the async-hooks context
 * manager and the W3C propagators (plus any the spec adds, such as X-Ray). Jest gives each spec file
 * its own globals, so the registration does not leak into other files.
 */
export interface TestTracing {
  readonly exporter: InMemorySpanExporter;
  /** The finished spans named `name`. */
  spans(name?: string): ReadableSpan[];
  /** Unregisters everything (the provider, the context manager, the propagator). */
  stop(): Promise<void>;
}

export function startTestTracing(extraPropagators: TextMapPropagator[] = []): TestTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator(), ...extraPropagators],
    }),
  );
  return {
    exporter,
    spans: (name) => exporter.getFinishedSpans().filter((span) => name === undefined || span.name === name),
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The span's parent span id (SDK 2.x keeps it in `parentSpanContext`). */
export function parentIdOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
