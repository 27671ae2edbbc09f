import { All, Controller, Delete, Get, HttpCode, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { errorBody, resultBody, RpcCode, RpcError, type RpcMessage } from './json-rpc.js';
import { McpErrorFilter } from './mcp-error.filter.js';
import type { McpRequest } from './mcp-request.js';
import { McpResponder } from './mcp-responder.js';
import { McpMethods } from './mcp-methods.js';
import { progressStreamFor, requestKey } from './progress-stream.js';
import { CredentialGuard, OriginGuard } from './mcp.guards.js';
import { McpRateLimitGuard } from './rate-limit.guard.js';
import { requestVersion } from './protocol-version.js';
import { SessionsService } from './sessions.service.js';

/**
 * Streamable HTTP: one JSON-RPC message per POST. The guards answer, in order, Origin/Host (403),
 * the credential (401) and the rate limit (429); the body size (413) was answered before them by McpBodyMiddleware.
 */
@ApiExcludeController()
@Controller('mcp')
@UseFilters(McpErrorFilter)
export class McpController {
  constructor(
    private readonly methods: McpMethods,
    private readonly sessions: SessionsService,
    private readonly responder: McpResponder,
  ) {}

  @Post()
  @UseGuards(OriginGuard, CredentialGuard, McpRateLimitGuard)
  async post(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    const state = req.mcp;
    const principal = state.principal!;
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = await this.sessions.get(sessionId, principal);
      state.sessionId = session.id;
      state.client = session.client;
    }
    // The protocol version is checked before the JSON-RPC envelope (spec/mcp.md "Order of checks").
    const parsed = state.message as { method?: unknown } | null | undefined;
    requestVersion(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed.method : undefined, header(req, 'mcp-protocol-version'));
    const message = envelope(req);
    const method = message.method;

    // Notifications and the client's responses are acknowledged without a body.
    if (method === undefined || !('id' in message)) {
      if (method !== undefined) await this.methods.notify(method, { principal, params: message.params, sessionId: state.sessionId ?? null });
      return this.responder.send(req, res, 202, null, { method: method ?? '(response)', outcome: 'ok' });
    }

    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    // With a progressToken and SSE accepted, progress turns the answer into an event stream (McpResponder ends it).
    state.stream = progressStreamFor(req, res, message.params);
    const out = await this.methods.run(method, {
      req,
      principal,
      params: message.params,
      signal: abort.signal,
      progress: state.stream?.report ?? (() => undefined),
      // Only a session's requests can be cancelled by notifications/cancelled (see McpMethods).
      requestKey: state.sessionId ? requestKey(state.sessionId, state.id) : undefined,
    });
    return this.responder.send(req, res, 200, resultBody(state.id, out.result), { method, tool: out.tool, projectId: out.projectId, outcome: out.outcome ?? 'ok' }, out.headers);
  }

  @Get()
  @UseGuards(OriginGuard, CredentialGuard, McpRateLimitGuard)
  get(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    return this.notAllowed(req, res, 'Method not allowed: this server offers no server-initiated stream; POST JSON-RPC messages to /mcp.');
  }

  @Delete()
  @HttpCode(204)
  @UseGuards(OriginGuard, CredentialGuard, McpRateLimitGuard)
  async delete(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId !== 'string') throw new RpcError(RpcCode.InvalidRequest, 'Send the Mcp-Session-Id header of the session to end.', 400);
    await this.sessions.end(sessionId, req.mcp.principal!);
    req.mcp.sessionId = sessionId;
    return this.responder.send(req, res, 204, null, { method: 'DELETE', outcome: 'ok' });
  }

  /** Any other HTTP method: a JSON-RPC error too, never the framework's HTML or REST error. Declared last so it only takes what the others leave. */
  @All()
  @UseGuards(OriginGuard, CredentialGuard, McpRateLimitGuard)
  other(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    return this.notAllowed(req, res, `Method not allowed: ${req.method} /mcp is not served; POST JSON-RPC messages to /mcp.`);
  }

  private async notAllowed(req: McpRequest, res: Response, message: string): Promise<void> {
    // A session named here is checked (404) and its client recorded, as for a POST (the SDK sends GET within its session).
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = await this.sessions.get(sessionId, req.mcp.principal!);
      req.mcp.sessionId = session.id;
      req.mcp.client = session.client;
    }
    const error = { code: RpcCode.ServerError, message };
    return this.responder.send(req, res, 405, errorBody(null, error.code, message), { method: req.method, outcome: 'invalid', error }, { Allow: 'POST, DELETE' });
  }
}

/** The JSON-RPC envelope checks, after the credential and session are known (so they are logged). */
function envelope(req: McpRequest): RpcMessage {
  const state = req.mcp;
  if (state.parseError) throw new RpcError(state.parseError.code, state.parseError.message, state.parseError.status);
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    // 400 like every -32600 (spec/mcp.md "HTTP status of JSON-RPC errors"), not 415.
    throw new RpcError(RpcCode.InvalidRequest, 'Invalid request: send the JSON-RPC message with Content-Type: application/json.', 400);
  }
  const message = state.message;
  if (Array.isArray(message)) throw new RpcError(RpcCode.InvalidRequest, 'Batches are not supported', 400);
  if (message === null || typeof message !== 'object') throw new RpcError(RpcCode.InvalidRequest, 'Invalid request: expected a JSON-RPC 2.0 message object.', 400);
  const m = message as Record<string, unknown>;
  const validId = !('id' in m) || typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id));
  const isRequest = typeof m.method === 'string';
  const isResponse = !('method' in m) && ('result' in m || 'error' in m) && 'id' in m;
  if (m.jsonrpc !== '2.0' || !validId || !(isRequest || isResponse)) {
    throw new RpcError(RpcCode.InvalidRequest, 'Invalid request: expected {"jsonrpc": "2.0", "method": string, "id"?: string | number, "params"?: object}.', 400);
  }
  return m as unknown as RpcMessage;
}

function header(req: McpRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
