import type { Response } from 'express';
import type { McpRequest } from './mcp-request.js';

/**
 * The SSE answer of a call whose client sent a `progressToken` and accepts `text/event-stream`:
 * opened by the first progress report, it carries `notifications/progress` events and then the
 * JSON-RPC response as its last event. A call that reports no progress is answered as plain JSON.
 */
export class ProgressStream {
  private last = -Infinity;
  private started = false;

  constructor(
    private readonly res: Response,
    private readonly token: string | number,
  ) {}

  /** Whether the response has become an event stream (headers sent). */
  get opened(): boolean {
    return this.started;
  }

  /** Sends `notifications/progress` (fraction of 1); values that do not increase are dropped, as MCP requires. */
  readonly report = (fraction: number, message?: string): void => {
    if (!Number.isFinite(fraction) || fraction <= this.last || this.res.writableEnded || this.res.destroyed) return;
    this.last = fraction;
    if (!this.started) {
      this.started = true;
      this.res.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
      this.res.flushHeaders();
    }
    const params = { progressToken: this.token, progress: fraction, total: 1, ...(message ? { message } : {}) };
    this.event(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params }));
  };

  /** The JSON-RPC response as the stream's last event. */
  end(body: string): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.event(body);
    this.res.end();
  }

  private event(data: string): void {
    this.res.write(`event: message\ndata: ${data}\n\n`);
  }
}

/** The stream for this request, when its client asked for progress and accepts SSE; else undefined. */
export function progressStreamFor(req: McpRequest, res: Response, params: unknown): ProgressStream | undefined {
  const meta = params !== null && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined;
  const token = meta !== null && typeof meta === 'object' ? (meta as { progressToken?: unknown }).progressToken : undefined;
  if (typeof token !== 'string' && !(typeof token === 'number' && Number.isFinite(token))) return undefined;
  const accept = req.headers.accept ?? '';
  return /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept) ? new ProgressStream(res, token) : undefined;
}
