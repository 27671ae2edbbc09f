import { Injectable, Logger, Optional } from '@nestjs/common';
import type { Response } from 'express';
import type { Outcome } from '../activity/activity-entry.entity.js';
import { ActivityWriterService } from '../activity/activity-writer.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { errorBody, resultBody, type RpcError } from '../protocol/json-rpc.js';
import type { McpRequest } from './mcp-request.js';
import { endMcpSpan, refusalEvent } from './mcp-span.js';
import type { MethodResult } from '../protocol/method-result.js';

interface Entry {
  method: string;
  tool: string | null;
  outcome: Outcome;
  projectId?: string | null;
  session?: MethodResult['session'] | null;
  error?: { code: number; message: string };
}

/**
 * Sends every /mcp answer, after its activity-log entry is durable: a response the client saw is
 * never missing from the log.
 */
@Injectable()
export class McpResponder {
  private readonly log = new Logger('McpActivity');

  constructor(
    private readonly activity: ActivityWriterService,
    @Optional() private readonly metrics?: MetricsService,
  ) {}

  /** A method's answer: its result with 200, or no body (202 to a notification or a client's response, 204 to DELETE). */
  answer(req: McpRequest, res: Response, status: number, out: MethodResult): Promise<void> {
    const state = req.mcp;
    const body = out.result === undefined ? null : resultBody(state.id, out.result);
    // A body without a JSON-RPC method is the client's response to us.
    const entry = {
      method: state.method ?? '(response)',
      tool: state.tool ?? null,
      outcome: out.outcome ?? 'ok',
      projectId: out.projectId,
      session: out.session,
    };
    return this.send(req, res, status, body, entry, out.headers);
  }

  /** A refusal: the JSON-RPC error with its HTTP status, carrying the request's id where the body could be read. */
  refuse(req: McpRequest, res: Response, err: RpcError, outcome: Outcome): Promise<void> {
    const state = req.mcp;
    // The body could not be read as a JSON-RPC message (no method).
    const entry = { method: state.method ?? '(invalid)', tool: state.tool ?? null, outcome, error: { code: err.code, message: err.message } };
    if (state.span) refusalEvent(req, outcome, entry.error);
    return this.send(req, res, err.httpStatus, errorBody(state.id, err.code, err.message, err.data), entry, err.headers);
  }

  /** The session's GET stream: recorded like any answer (when it opens), then `open` turns `res` into the stream. */
  async stream(req: McpRequest, open: () => Promise<void>): Promise<void> {
    await this.record(req, 200, { method: req.mcp.method ?? 'GET', tool: null, outcome: 'ok' });
    await open();
  }

  private send(req: McpRequest, res: Response, status: number, body: string | null, entry: Entry, headers?: Record<string, string>): Promise<void> {
    return this.record(req, status, entry).then(() => this.write(req, res, status, body, headers));
  }

  private write(req: McpRequest, res: Response, status: number, body: string | null, headers?: Record<string, string>): void {
    const state = req.mcp;
    // A call that streamed progress ends its event stream with the answer (result or error).
    if (state.stream?.opened) return state.stream.end(body ?? '');
    if (res.headersSent) return;
    // Node's own response calls: express's send() would hash every answer for an ETag that no JSON-RPC client uses.
    if (headers) for (const name in headers) res.setHeader(name, headers[name]);
    res.statusCode = status;
    if (body !== null) res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(body ?? undefined);
  }

  /** The activity-log entry (durable before the answer goes out) and the metrics of an answer. */
  private record(req: McpRequest, status: number, entry: Entry): Promise<void> {
    const state = req.mcp;
    const session = entry.session ?? state.session;
    const written = state.principal
      ? this.activity
          .record({
            accountId: state.principal.accountId,
            credential: state.principal.credential,
            // The client the request names: a session's (opened by this request, or the one it was sent in) in
            // the legacy era, its `_meta` clientInfo in the modern one (state.client, from EraGuard).
            client: entry.session ? entry.session.client : (state.client?.info ?? state.session?.client ?? null),
            sessionId: session?.id ?? null,
            method: entry.method,
            tool: entry.tool,
            projectId: entry.projectId ?? null,
            outcome: entry.outcome,
            error: entry.error ?? null,
            durationMs: performance.now() - state.startedAt,
            requestId: typeof req.id === 'string' ? req.id : null,
          })
          .catch((err: Error) => this.log.error(`Activity entry not written: ${err.message}`))
      : Promise.resolve();
    return written.then(() => this.measure(req, status, entry, session));
  }

  private measure(req: McpRequest, status: number, entry: Entry, session: Entry['session'] | undefined): void {
    const state = req.mcp;
    if (state.span) endMcpSpan(req, { outcome: entry.outcome, error: entry.error, projectId: entry.projectId, sessionId: session?.id });
    this.metrics?.request({
      method: entry.method,
      tool: entry.tool,
      outcome: entry.outcome,
      status,
      seconds: (performance.now() - state.startedAt) / 1000,
      errorType: entry.error ? String(entry.error.code) : entry.outcome === 'tool_error' ? 'tool_error' : undefined,
    });
  }
}
