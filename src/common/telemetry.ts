import {
  context,
  metrics as otelMetrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Meter,
  type Tracer,
} from '@opentelemetry/api';
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
let meterProvider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | null = null;

/**
 * The server's tracer: the API's no-op one until the SDK is started, then the SDK's own (a span is started
 * on it directly, not through the API's proxy tracer).
 */
export let tracer: Tracer = trace.getTracer('reblog-mcp');

/** Whether spans are recorded and exported. */
export function tracingOn(): boolean {
  return provider !== null;
}

/** Whether metrics are exported over OTLP too (else they are on /metrics only, and no OTLP instrument is made). */
export function metricsOn(): boolean {
  return meterProvider !== null;
}

/**
 * `call` in a CLIENT span named `name` when tracing is on and a request or job is being traced; else
 * `call` alone. The span ends when its promise settles, with `error.type` (`_OTHER`) on a failure.
 */
export function clientSpan<T>(name: string, attributes: Attributes, call: () => Promise<T>): Promise<T> {
  if (!tracingOn() || !trace.getActiveSpan()) return call();
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, (span) =>
    call().then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        span.setAttribute('error.type', '_OTHER');
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw err;
      },
    ),
  );
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

/** Whether `env` asks for metrics to be exported over OTLP too (the same endpoint; `OTEL_METRICS_EXPORTER=none` keeps them on /metrics only). */
export function metricsWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_METRICS_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || exporter === 'otlp');
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
  const traces = !provider && tracingWanted(env);
  const metrics = !meterProvider && metricsWanted(env);
  if (!traces && !metrics) return provider !== null;
  const protocolOf = (signal: 'TRACES' | 'METRICS') => {
    const protocol = (env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
    if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
      throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not supported), not "${protocol}".`);
    }
    return protocol;
  };
  const tracesProtocol = traces ? protocolOf('TRACES') : undefined;
  const metricsProtocol = metrics ? protocolOf('METRICS') : undefined;
  const { detectResources, envDetector, resourceFromAttributes } = await import('@opentelemetry/resources');
  const resource = resourceFromAttributes({ 'service.name': 'reblog-mcp' }).merge(detectResources({ detectors: [envDetector] }));
  if (traces) {
    const [{ NodeTracerProvider, BatchSpanProcessor }, exporterModule] = await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      tracesProtocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
    ]);
    const started = new NodeTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new exporterModule.OTLPTraceExporter({ httpAgentOptions: keepAliveAgent }))],
    });
    started.register();
    provider = started;
    tracer = started.getTracer('reblog-mcp');
  }
  if (metrics) {
    const [{ MeterProvider, PeriodicExportingMetricReader }, exporterModule] = await Promise.all([
      import('@opentelemetry/sdk-metrics'),
      metricsProtocol === 'http/json' ? import('@opentelemetry/exporter-metrics-otlp-http') : import('@opentelemetry/exporter-metrics-otlp-proto'),
    ]);
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 60_000);
    const reader = new PeriodicExportingMetricReader({
      exporter: new exporterModule.OTLPMetricExporter({ httpAgentOptions: keepAliveAgent }),
      exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
    });
    const started = new MeterProvider({ resource, readers: [reader] });
    otelMetrics.setGlobalMeterProvider(started);
    meterProvider = started;
  }
  return provider !== null;
}

/**
 * The exporter's connections. Its default factory loads `http` with a dynamic import(), which only helps an
 * HTTP instrumentation this server does not use, and which a CommonJS test run cannot do.
 */
function keepAliveAgent(protocol: string): HttpAgent {
  return protocol === 'http:' ? new HttpAgent({ keepAlive: true }) : new HttpsAgent({ keepAlive: true });
}

/** The server's meter: the OTLP one once the SDK is started, else the API's no-op one (ask after startTelemetry). */
export function meter(): Meter {
  return otelMetrics.getMeter('reblog-mcp');
}

/** Sends what is still batched (tests; before a shutdown). */
export async function flushTelemetry(): Promise<void> {
  await Promise.all([provider, meterProvider].map((p) => (p ? p.forceFlush() : Promise.resolve())));
}

/** Flushes and stops the SDK, if started. */
export async function shutdownTelemetry(): Promise<void> {
  const stopping = [provider, meterProvider];
  provider = meterProvider = null;
  await Promise.all(stopping.map((p) => (p ? p.shutdown() : Promise.resolve())));
}
