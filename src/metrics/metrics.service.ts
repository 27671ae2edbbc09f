import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Attributes } from '@opentelemetry/api';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { meter, metricsOn } from '../common/telemetry.js';
import { TOOL_NAMES } from '../common/tool-names.js';
import { collectStoppableDefaultMetrics } from './default-metrics.js';

/** Methods that get their own label value; anything a client invents is counted as "other". */
const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'resources/list',
  'prompts/list',
  'DELETE',
  '(response)',
  '(invalid)',
]);
const KNOWN_TOOLS = new Set<string>(TOOL_NAMES);

/** What one answered /mcp request tells the metrics. */
export interface RequestSample {
  method: string;
  tool?: string | null;
  outcome: string;
  status: number;
  seconds: number;
  /** The JSON-RPC error code as a string, or `tool_error` for an `isError` result; absent on success. */
  errorType?: string;
}

/** How a job run ended on this instance. */
export type JobRunOutcome = 'succeeded' | 'failed' | 'error' | 'stopped';

/** The MCP semantic conventions' buckets for `mcp.server.operation.duration` and `mcp.server.session.duration` (seconds). */
export const MCP_DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const JOB_DURATION_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];

/** The OTLP histograms of {@link MetricsService}, named and bucketed as the MCP semantic conventions say. */
function otelInstruments() {
  return {
    operationDuration: meter().createHistogram('mcp.server.operation.duration', {
      unit: 's',
      description: 'Duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent.',
      advice: { explicitBucketBoundaries: MCP_DURATION_BUCKETS },
    }),
    sessionDuration: meter().createHistogram('mcp.server.session.duration', {
      unit: 's',
      description: 'The duration of the MCP session as observed on the MCP server (ended by its client, or expired: to its last recorded use).',
      advice: { explicitBucketBoundaries: MCP_DURATION_BUCKETS },
    }),
    jobRunDuration: meter().createHistogram('reblog.job.run.duration', {
      unit: 's',
      description: 'Time a job run took, by handler (reblog.job.tool) and outcome.',
      advice: { explicitBucketBoundaries: JOB_DURATION_BUCKETS },
    }),
  };
}

/**
 * The Prometheus metrics of one application instance, in its own registry (several apps may share
 * a process in tests). Label values are normalised so a client cannot grow the series count.
 */
@Injectable()
export class MetricsService implements OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly stopDefaultMetrics: () => void;

  private readonly requests = new Counter({
    name: 'reblog_mcp_requests_total',
    help: 'Answered /mcp requests by JSON-RPC method, tool, outcome and HTTP status.',
    labelNames: ['method', 'tool', 'outcome', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'reblog_mcp_request_duration_seconds',
    help: 'Time from the first byte of a /mcp request to its answer, activity entry included.',
    labelNames: ['method', 'outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  /** `mcp.server.operation.duration`, as Prometheus names it. */
  private readonly operationDuration = new Histogram({
    name: 'reblog_mcp_server_operation_duration_seconds',
    help: 'mcp.server.operation.duration: time to answer a /mcp request, by mcp.method.name, gen_ai.tool.name and error.type (empty on success).',
    labelNames: ['mcp_method_name', 'gen_ai_tool_name', 'error_type'] as const,
    buckets: MCP_DURATION_BUCKETS,
    registers: [this.registry],
  });
  /** A job run's duration by handler (the job's tool) and how it ended. */
  private readonly jobRunDuration = new Histogram({
    name: 'reblog_job_run_duration_seconds',
    help: 'reblog.job.run.duration: time a job run took on this instance, by handler (tool) and outcome (succeeded; failed: the job error; error: an unexpected one; stopped: cancelled or handed back).',
    labelNames: ['tool', 'outcome'] as const,
    buckets: JOB_DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly sessionDuration = new Histogram({
    name: 'reblog_mcp_server_session_duration_seconds',
    help: 'mcp.server.session.duration: how long a 2025 session lasted, from initialize to the DELETE that ended it, or to its last recorded use when it expired (counted when it is purged).',
    buckets: MCP_DURATION_BUCKETS,
    registers: [this.registry],
  });
  /**
   * The same figures over OTLP, only when they are exported (the SDK was started first: README.md#tracing);
   * else null, and a request builds no attribute map for them.
   */
  private readonly otel = metricsOn() ? otelInstruments() : null;
  private readonly otelAttributes = new Map<string, Attributes>();

  readonly rateLimitRefusals = new Counter({
    name: 'reblog_rate_limit_refusals_total',
    help: 'Requests refused with 429 by a per-credential rate limit (/mcp requests, protocol chatter, or image reads on /media).',
    registers: [this.registry],
  });
  readonly rateLimitWaits = new Counter({
    name: 'reblog_rate_limit_waits_total',
    help: 'JSON-RPC requests over the per-credential rate limit that waited for their slot instead of being refused.',
    registers: [this.registry],
  });
  readonly rateLimitStoreErrors = new Counter({
    name: 'reblog_rate_limit_store_errors_total',
    help: "Rate-limit decisions the shared store (Redis) could not make; each fell back to this instance's own window.",
    registers: [this.registry],
  });
  readonly rateLimitStoreUp = new Gauge({
    name: 'reblog_rate_limit_store_up',
    help: '1 while the shared rate-limit store answers (or none is configured), 0 while decisions fall back to this instance.',
    registers: [this.registry],
  });
  readonly retentionRemoved = new Counter({
    name: 'reblog_retention_rows_removed_total',
    help: 'Rows the retention purge deleted, by table (activity_log, audit_events, jobs, media).',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });
  readonly retentionLastSuccess = new Gauge({
    name: 'reblog_retention_last_success_timestamp_seconds',
    help: 'When this instance last finished a retention purge (0: never; one instance at a time purges, so watch the max over instances).',
    registers: [this.registry],
  });
  readonly activityBatchSize = new Histogram({
    name: 'reblog_activity_batch_size',
    help: 'Activity-log entries written per group-committed INSERT.',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
    registers: [this.registry],
  });
  readonly activityLag = new Histogram({
    name: 'reblog_activity_commit_lag_seconds',
    help: 'Time from recording an activity entry to the commit that made it durable (the answer waits for it).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });
  readonly activityFailures = new Counter({
    name: 'reblog_activity_write_failures_total',
    help: 'Activity-log entries whose INSERT failed (the request was still answered; the error is logged).',
    registers: [this.registry],
  });
  readonly drainRefusals = new Counter({
    name: 'reblog_drain_refusals_total',
    help: 'Requests answered 503 because this instance is shutting down.',
    registers: [this.registry],
  });

  constructor() {
    this.rateLimitStoreUp.set(1);
    this.stopDefaultMetrics = collectStoppableDefaultMetrics(this.registry, 'reblog_');
  }

  /** Stops the default metrics' event-loop and GC monitors (after the server has closed: no scrape is left to read them). */
  onApplicationShutdown(): void {
    this.stopDefaultMetrics();
  }

  /** Counts one answered /mcp request. */
  request(sample: RequestSample): void {
    const method = KNOWN_METHODS.has(sample.method) ? sample.method : sample.method.startsWith('notifications/') ? 'notifications/other' : 'other';
    const tool = sample.tool ? (KNOWN_TOOLS.has(sample.tool) ? sample.tool : 'other') : '';
    this.requests.inc({ method, tool, outcome: sample.outcome, status: String(sample.status) });
    this.latency.observe({ method, outcome: sample.outcome }, sample.seconds);
    const errorType = sample.errorType ?? '';
    this.operationDuration.observe({ mcp_method_name: method, gen_ai_tool_name: tool, error_type: errorType }, sample.seconds);
    if (!this.otel) return;
    this.otel.operationDuration.record(sample.seconds, this.operationAttributes(method, tool, errorType));
  }

  /** The OTLP attributes of a request's point: few combinations (the labels above are normalised), each made once. */
  private operationAttributes(method: string, tool: string, errorType: string): Attributes {
    const key = `${method} ${tool} ${errorType}`;
    let attributes = this.otelAttributes.get(key);
    if (!attributes) {
      const made: Attributes = { 'mcp.method.name': method };
      if (tool) made['gen_ai.tool.name'] = tool;
      if (errorType) made['error.type'] = errorType;
      attributes = Object.freeze(made);
      this.otelAttributes.set(key, attributes);
    }
    return attributes;
  }

  /** A session that ended (DELETE /mcp) or expired (recorded when purged), `seconds` after it was opened. */
  sessionEnded(seconds: number): void {
    this.sessionDuration.observe(seconds);
    this.otel?.sessionDuration.record(seconds);
  }

  /** One job run that ended on this instance. */
  jobRun(tool: string, outcome: JobRunOutcome, seconds: number): void {
    const kind = KNOWN_TOOLS.has(tool) ? tool : 'other';
    this.jobRunDuration.observe({ tool: kind, outcome }, seconds);
    this.otel?.jobRunDuration.record(seconds, { 'reblog.job.tool': kind, 'reblog.job.outcome': outcome });
  }
}
