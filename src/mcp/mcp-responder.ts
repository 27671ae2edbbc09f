import { Injectable, Logger, Optional } from '@nestjs/common';
import type { Response } from 'express';
import type { Outcome } from '../activity/activity-entry.entity.js';
import { ActivityService } from '../activity/activity.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { McpRequest } from './mcp-request.js';

export interface Recorded {
  method: string;
  tool?: string | null;
  projectId?: string | null;
  outcome: Outcome;
  error?: { code: number; message: string } | null;
}

/**
 * Sends every /mcp answer, after its activity-log entry is durable: a response the client saw is
 * never missing from the log.
 */
@Injectable()
export class McpResponder {
  private readonly log = new Logger('McpActivity');

  constructor(
    private readonly activity: ActivityService,
    @Optional() private readonly metrics?: MetricsService,
  ) {}

  async send(req: McpRequest, res: Response, status: number, body: string | null, recorded: Recorded | null, headers?: Record<string, string>): Promise<void> {
    const state = req.mcp;
    if (state.principal && recorded) {
      await this.activity
        .record({
          accountId: state.principal.accountId,
          credential: state.principal.credential,
          client: state.client ?? null,
          sessionId: state.sessionId ?? null,
          method: recorded.method,
          tool: recorded.tool ?? null,
          projectId: recorded.projectId ?? null,
          outcome: recorded.outcome,
          error: recorded.error ?? null,
          durationMs: performance.now() - state.startedAt,
        })
        .catch((err: Error) => this.log.error(`Activity entry not written: ${err.message}`));
    }
    this.metrics?.request({ method: recorded?.method ?? req.method, tool: recorded?.tool, outcome: recorded?.outcome ?? 'ok', status, seconds: (performance.now() - state.startedAt) / 1000 });
    // A call that streamed progress ends its event stream with the answer (result or error).
    if (state.stream?.opened) return state.stream.end(body ?? '');
    if (res.headersSent) return;
    // Node's own response calls: express's send() would hash every answer for an ETag that no JSON-RPC client uses.
    if (headers) for (const name in headers) res.setHeader(name, headers[name]);
    res.statusCode = status;
    if (body !== null) res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(body ?? undefined);
  }
}
