import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type TextMapGetter,
} from '@opentelemetry/api';
import type { Outcome } from '../activity/activity-entry.entity.js';
import { tracer } from '../common/telemetry.js';
import type { McpRequest } from './mcp-request.js';

/** Reads `traceparent`, `tracestate` and `baggage` from a `params._meta` object (string values only). */
const META: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

/** Methods whose `params.uri` names the resource they act on. */
const RESOURCE_METHODS: ReadonlySet<string> = new Set(['resources/read', 'resources/subscribe', 'resources/unsubscribe']);

/**
 * Starts the SERVER span of a /mcp request (MCP semantic conventions, README.md#tracing) and answers the
 * context to serve the request in. Its parent is the trace context of `params._meta` (reserved by
 * 2026-07-28, accepted in 2025 requests too), else the W3C `traceparent` header of a gateway; with both,
 * the header's becomes a link. Called only while tracing is on.
 */
export function startMcpSpan(req: McpRequest): Context {
  const state = req.mcp;
  const message = state.message as { params?: { _meta?: unknown; name?: unknown; uri?: unknown } } | undefined;
  const params = message && typeof message === 'object' && message.params && typeof message.params === 'object' ? message.params : undefined;
  const meta = params?._meta && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : undefined;

  const fromHeader = propagation.extract(ROOT_CONTEXT, req.headers);
  const fromMeta = meta && typeof meta.traceparent === 'string' ? propagation.extract(ROOT_CONTEXT, meta, META) : undefined;
  const metaSpan = fromMeta && trace.getSpanContext(fromMeta);
  const headerSpan = trace.getSpanContext(fromHeader);
  const parent = metaSpan ? fromMeta : fromHeader;
  const links: Link[] = metaSpan && headerSpan ? [{ context: headerSpan, attributes: { 'reblog.link': 'http' } }] : [];

  const method = state.method ?? req.method;
  const attributes: Attributes = {
    'mcp.method.name': method,
    'client.address': req.ip,
    'client.port': req.socket.remotePort,
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
    'network.protocol.version': req.httpVersion,
    'reblog.request.id': typeof req.id === 'string' ? req.id : undefined,
  };
  if (state.id !== null && state.id !== undefined) attributes['jsonrpc.request.id'] = String(state.id);
  let target: string | undefined;
  if (method === 'tools/call' && state.tool !== undefined) {
    target = state.tool;
    attributes['gen_ai.tool.name'] = state.tool;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  } else if (method === 'prompts/get' && typeof params?.name === 'string') {
    target = params.name.slice(0, 100);
    attributes['gen_ai.prompt.name'] = target;
  }
  if (RESOURCE_METHODS.has(method) && typeof params?.uri === 'string') attributes['mcp.resource.uri'] = params.uri.slice(0, 1_000);

  const span = tracer.startSpan(target === undefined ? method : `${method} ${target}`, { kind: SpanKind.SERVER, attributes, links }, parent);
  state.span = span;
  return trace.setSpan(context.active(), span);
}

/** What the answer of a request tells its span. */
export interface SpanEnd {
  outcome: Outcome;
  error?: { code: number; message: string };
  projectId?: string | null;
  sessionId?: string | null;
}

/** Ends the request's span (if it has one) with what was learnt serving it: who called, the version, the error. */
export function endMcpSpan(req: McpRequest, end: SpanEnd): void {
  const state = req.mcp;
  const span = state.span;
  if (!span) return;
  state.span = undefined;
  // Set one by one on the span (it copies each anyway): no attribute map is made per request.
  if (state.version) span.setAttribute('mcp.protocol.version', state.version);
  // A 2026-07-28 request has no session: its span never names one.
  if (state.era !== 'modern' && end.sessionId) span.setAttribute('mcp.session.id', end.sessionId);
  if (state.principal) {
    span.setAttribute('reblog.account.id', state.principal.accountId);
    span.setAttribute('reblog.credential.id', state.principal.credential.id);
    span.setAttribute('reblog.credential.type', state.principal.credential.type);
  }
  if (end.projectId) span.setAttribute('reblog.project.id', end.projectId);
  span.setAttribute('reblog.outcome', end.outcome);
  if (end.error) {
    span.setAttribute('error.type', String(end.error.code));
    span.setAttribute('rpc.response.status_code', String(end.error.code));
    span.setStatus({ code: SpanStatusCode.ERROR, message: end.error.message });
  } else if (end.outcome === 'tool_error') {
    span.setAttribute('error.type', 'tool_error');
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** A guard's refusal, as an event of the request's span. */
export function refusalEvent(req: McpRequest, outcome: Outcome, error: { code: number; message: string }): void {
  req.mcp.span?.addEvent('mcp.refused', { 'reblog.outcome': outcome, 'error.type': String(error.code), 'reblog.refusal': error.message });
}
