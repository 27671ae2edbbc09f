import { context, propagation, ROOT_CONTEXT, trace, type Link, type Tracer } from '@opentelemetry/api';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/**
 * OpenTelemetry tracing, configured only by the standard `OTEL_*` variables (README.md#tracing).
 *
 * The SDK is loaded and started only when an exporter is asked for (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_TRACES_EXPORTER=otlp`) and `OTEL_SDK_DISABLED` is not
 * `true`. Otherwise nothing is loaded and {@link tracingOn} is false: the span code of the /mcp path is
 * skipped outright, and the rest goes to the API's no-op tracer.
 */
let provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | null = null;

/** The server's tracer (the API's no-op one until the SDK is started). */
export const tracer: Tracer = trace.getTracer('reblog-mcp');

/** Whether spans are recorded and exported. */
export function tracingOn(): boolean {
  return provider !== null;
}

/** The W3C `traceparent` of the active span (to carry it to a job); null when tracing is off or no span is active. */
export function currentTraceparent(): string | null {
  if (!tracingOn() || !trace.getActiveSpan()) return null;
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** A link to the span a stored `traceparent` names (none when it is null or not valid). */
export function linksTo(traceparent: string | null): Link[] {
  if (!traceparent) return [];
  const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return linked ? [{ context: linked }] : [];
}

/** Whether `env` asks for traces to be exported. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporter === 'otlp');
}

/**
 * Starts the tracing SDK when {@link tracingWanted}: a batching OTLP/HTTP exporter (`http/protobuf`, the
 * standard's default, or `http/json` by `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`), the resource of
 * `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` (service name `reblog-mcp` by default), the sampler of
 * `OTEL_TRACES_SAMPLER`, W3C trace context and baggage. The exporter reads its endpoint, headers and
 * timeouts from the environment itself. Answers whether it started.
 */
export async function startTelemetry(): Promise<boolean> {
  const env = process.env;
  if (provider || !tracingWanted(env)) return provider !== null;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not supported), not "${protocol}".`);
  }
  const [{ NodeTracerProvider, BatchSpanProcessor }, { detectResources, envDetector, resourceFromAttributes }, exporterModule] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const resource = resourceFromAttributes({ 'service.name': 'reblog-mcp' }).merge(detectResources({ detectors: [envDetector] }));
  const started = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new exporterModule.OTLPTraceExporter({ httpAgentOptions: keepAliveAgent }))],
  });
  started.register();
  provider = started;
  return true;
}

/**
 * The exporter's connections. Its default factory loads `http` with a dynamic import(), which only helps an
 * HTTP instrumentation this server does not use, and which a CommonJS test run cannot do.
 */
function keepAliveAgent(protocol: string): HttpAgent {
  return protocol === 'http:' ? new HttpAgent({ keepAlive: true }) : new HttpsAgent({ keepAlive: true });
}

/** Sends what is still batched (tests; before a shutdown). */
export async function flushTelemetry(): Promise<void> {
  await provider?.forceFlush();
}

/** Flushes and stops the SDK, if started. */
export async function shutdownTelemetry(): Promise<void> {
  const stopping = provider;
  provider = null;
  await stopping?.shutdown();
}
