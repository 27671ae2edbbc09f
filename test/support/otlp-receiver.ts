import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, with its attributes as a plain object. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
  /** The resource's attributes (service.name…). */
  resource: Record<string, unknown>;
}

/** One data point of a received metric (histograms, sums and gauges alike). */
export interface ReceivedPoint {
  attributes: Record<string, unknown>;
  /** Histograms: how many values, their sum, and the bucket bounds. */
  count?: number;
  sum?: number;
  explicitBounds?: number[];
  /** Sums and gauges. */
  value?: number;
}

export interface ReceivedMetric {
  name: string;
  unit?: string;
  points: ReceivedPoint[];
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
type KeyValues = { key: string; value: AnyValue }[] | undefined;

function plain(attributes: KeyValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? [])
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
  return out;
}

/**
 * A small OTLP/HTTP receiver (JSON encoding, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) on a loopback port:
 * it decodes every `POST /v1/traces` the exporter sends and keeps the spans.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every metric export, in order (a cumulative metric's latest export is its last). */
  readonly metrics: ReceivedMetric[] = [];
  /** Export requests whose body was not OTLP JSON. */
  readonly rejected: string[] = [];
  private readonly server: Server;
  /** http://127.0.0.1:<port>, the value of OTEL_EXPORTER_OTLP_ENDPOINT (set once listening). */
  url = '';

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || (req.url !== '/v1/traces' && req.url !== '/v1/metrics') || !/json/.test(req.headers['content-type'] ?? '')) {
          this.rejected.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
          res.writeHead(415).end();
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (req.url === '/v1/metrics') this.acceptMetrics(body);
        else this.accept(body);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
  }

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  /** The spans named `name`. */
  named(name: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }

  /** The points of the latest export of metric `name` (cumulative: they hold everything so far). */
  latest(name: string): ReceivedPoint[] {
    return this.metrics.filter((m) => m.name === name).at(-1)?.points ?? [];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(body: {
    resourceSpans?: {
      resource?: { attributes?: KeyValues };
      scopeSpans?: {
        spans?: (Omit<ReceivedSpan, 'attributes' | 'events' | 'links' | 'resource'> & {
          attributes?: KeyValues;
          events?: { name: string; attributes?: KeyValues }[];
          links?: { traceId: string; spanId: string; attributes?: KeyValues }[];
        })[];
      }[];
    }[];
  }): void {
    for (const rs of body.resourceSpans ?? []) {
      const resource = plain(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            ...s,
            parentSpanId: s.parentSpanId || undefined,
            attributes: plain(s.attributes),
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: plain(e.attributes) })),
            links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: plain(l.attributes) })),
            resource,
          });
        }
      }
    }
  }

  private acceptMetrics(body: {
    resourceMetrics?: {
      scopeMetrics?: {
        metrics?: {
          name: string;
          unit?: string;
          histogram?: { dataPoints?: { attributes?: KeyValues; count?: string | number; sum?: number; explicitBounds?: number[] }[] };
          sum?: { dataPoints?: { attributes?: KeyValues; asInt?: string | number; asDouble?: number }[] };
          gauge?: { dataPoints?: { attributes?: KeyValues; asInt?: string | number; asDouble?: number }[] };
        }[];
      }[];
    }[];
  }): void {
    for (const rm of body.resourceMetrics ?? []) {
      for (const sm of rm.scopeMetrics ?? []) {
        for (const m of sm.metrics ?? []) {
          const points: ReceivedPoint[] = [
            ...(m.histogram?.dataPoints ?? []).map((p) => ({
              attributes: plain(p.attributes),
              count: Number(p.count),
              sum: p.sum,
              explicitBounds: p.explicitBounds,
            })),
            ...[...(m.sum?.dataPoints ?? []), ...(m.gauge?.dataPoints ?? [])].map((p) => ({
              attributes: plain(p.attributes),
              value: Number(p.asInt ?? p.asDouble),
            })),
          ];
          this.metrics.push({ name: m.name, unit: m.unit, points });
        }
      }
    }
  }
}
