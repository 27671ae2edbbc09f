import type { Response } from 'express';
import { logPasses, type LogLevel } from './client-capabilities.js';
import type { McpRequest } from '../mcp/mcp-request.js';

/**
 * The answer of one JSON-RPC request, which becomes an SSE stream (when the client accepts
 * `text/event-stream`) at the first message the server has for the client before the response:
 * `notifications/progress` (when the client sent a `progressToken`), `notifications/message` (at or
 * above the session's log level) and server→client requests (`elicitation/create`,
 * `sampling/createMessage`). The JSON-RPC response is its last event. A call with nothing to say
 * before its answer is answered as plain JSON.
 */
export class CallStream {
  private last = -Infinity;
  private started = false;

  constructor(
    private readonly res: Response,
    /** The client accepts `text/event-stream`. */
    private readonly sse: boolean,
    private readonly progressToken: string | number | undefined,
    /** The session's level; null (none set, or no session): no log messages. */
    private readonly logLevel: LogLevel | null,
    /** No request waits for the call (a task's run). */
    private readonly detachedRun = false,
  ) {}

  /** The stream of a call that no request waits for (a task's run): nothing it sends goes anywhere. */
  static detached(): CallStream {
    return new CallStream(null as unknown as Response, false, undefined, null, true);
  }

  /**
   * Whether the call may keep its client waiting past the common clients' timeout (60 s without a
   * word): its progress reaches the client (a `progressToken` and an event stream), so a client that
   * resets its timeout on progress keeps waiting; or no request waits for it at all (a task's run,
   * which the client polls). A call without either is silent until its answer.
   */
  get keptAlive(): boolean {
    return this.detachedRun || (this.sse && this.progressToken !== undefined);
  }

  /** Whether the response has become an event stream (headers sent). */
  get opened(): boolean {
    return this.started;
  }

  /** Whether a message sent now can reach the client: SSE accepted and the connection still open. */
  get writable(): boolean {
    return this.sse && !this.res.writableEnded && !this.res.destroyed;
  }

  /**
   * Progress (fraction of 1): `notifications/progress` when the client asked for it, and its message as
   * an info-level `notifications/message` (from `logger`). Values that do not increase are dropped, as MCP requires.
   */
  readonly progress = (fraction: number, message?: string, logger?: string): void => {
    if (!Number.isFinite(fraction) || fraction <= this.last) return;
    this.last = fraction;
    if (this.progressToken !== undefined) {
      this.send({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: this.progressToken, progress: fraction, total: 1, ...(message ? { message } : {}) },
      });
    }
    if (message) this.log('info', message, logger);
  };

  /** `notifications/message` when `level` is at or above the session's level. */
  log(level: LogLevel, data: unknown, logger?: string): void {
    if (!logPasses(level, this.logLevel)) return;
    this.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level, ...(logger ? { logger } : {}), data } });
  }

  /** Sends one message as an event, opening the stream first; false when it cannot reach the client. */
  send(message: object): boolean {
    if (!this.writable) return false;
    if (!this.started) {
      this.started = true;
      this.res.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
      this.res.flushHeaders();
    }
    this.event(JSON.stringify(message));
    return true;
  }

  /** An SSE comment, so that proxies do not close a stream that waits long for the client (clients ignore it). */
  keepAlive(): void {
    if (this.started && this.writable) this.res.write(': keep-alive\n\n');
  }

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

/** The stream of this request: SSE when its client accepts it, with its progressToken and its client's log level. */
export function callStreamFor(req: McpRequest, res: Response, params: unknown, logLevel: LogLevel | null): CallStream {
  const meta = params !== null && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined;
  const token = meta !== null && typeof meta === 'object' ? (meta as { progressToken?: unknown }).progressToken : undefined;
  const progressToken = typeof token === 'string' || (typeof token === 'number' && Number.isFinite(token)) ? token : undefined;
  const sse = /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(req.headers.accept ?? '');
  return new CallStream(res, sse, progressToken, logLevel);
}
