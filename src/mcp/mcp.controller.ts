import { All, Controller, Delete, Get, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { callStreamFor } from '../protocol/call-stream.js';
import { ClientRequests } from './client-requests.service.js';
import { bearerToken } from '../common/bearer.js';
import { RpcCode, RpcError, type RpcMessage } from '../protocol/json-rpc.js';
import { McpErrorFilter } from './mcp-error.filter.js';
import { sessionClient, type McpRequest } from './mcp-request.js';
import { McpResponder } from './mcp-responder.js';
import { McpMethods } from './mcp-methods.js';
import { McpChecks } from './mcp.guards.js';
import { SessionStreams } from './session-streams.js';
import { RpcEnvelopePipe } from './rpc-envelope.pipe.js';
import { SessionsService } from './sessions.service.js';

const ALLOW = { Allow: 'GET, POST, DELETE' };

/**
 * Streamable HTTP: one JSON-RPC message per POST. The checks answer in the order of docs/protocol.md#order-of-checks: the
 * body size (413) in McpBodyMiddleware, then the guards McpChecks runs in turn: Origin/Host (403), the
 * credential (401), the rate limit (429), the session (404) and the protocol version (400); the JSON-RPC envelope
 * (-32700, -32600) is RpcEnvelopePipe, and the method table the last word.
 */
@ApiExcludeController()
@Controller('mcp')
@UseFilters(McpErrorFilter)
@UseGuards(McpChecks)
export class McpController {
  constructor(
    private readonly methods: McpMethods,
    private readonly sessions: SessionsService,
    private readonly responder: McpResponder,
    private readonly clientRequests: ClientRequests,
    private readonly streams: SessionStreams,
    private readonly envelope: RpcEnvelopePipe,
  ) {}

  @Post()
  async post(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    // The envelope is the handler's first step rather than a parameter pipe: Nest would run a parameter
    // through the app's global ValidationPipe too, each pipe a round of promises, for a check that is synchronous.
    const message: RpcMessage = this.envelope.transform(req);
    const { principal, session = null, id } = req.mcp;
    // Notifications and the client's responses are acknowledged without a body.
    if (message.method === undefined || !('id' in message)) {
      // 2026-07-28 defines no client notification over HTTP (closing the stream cancels) and sends no
      // server→client request to answer: acknowledged and ignored.
      if (req.mcp.era === 'modern') return this.responder.answer(req, res, 202, {});
      if (message.method !== undefined) await this.methods.notify(message.method, { principal: principal!, session, params: message.params });
      // The client's answer to a request the server sent on a call's stream (that call may run on another instance).
      else await this.clientRequests.answer(principal!, session, message);
      return this.responder.answer(req, res, 202, {});
    }
    // The first progress, log message or request to the client turns the answer into an event stream when the client accepts one (McpResponder ends it).
    const era = req.mcp.era ?? 'legacy';
    const client = (req.mcp.client ??= sessionClient(session));
    req.mcp.stream = callStreamFor(req, res, message.params, client.logLevel);
    const out = await this.methods.run(message.method, {
      principal: principal!,
      session,
      era,
      client,
      id,
      params: message.params,
      signal: closed(res),
      stream: req.mcp.stream,
    });
    return this.responder.answer(req, res, 200, out);
  }

  /**
   * The session's stream of server-initiated messages (resource updates), open until the session ends,
   * the client goes or the server stops; a newer one replaces it. Stateless clients have none.
   */
  @Get()
  async get(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    const session = req.mcp.session;
    if (!session) {
      throw new RpcError(
        RpcCode.InvalidRequest,
        'Bad request: GET /mcp opens the stream of a session; send the Mcp-Session-Id header that initialize gave (a client without a session cannot subscribe to anything).',
        400,
      );
    }
    if (!acceptsEventStream(req.headers.accept)) {
      throw new RpcError(RpcCode.ServerError, 'Not acceptable: GET /mcp answers a text/event-stream; send "Accept: text/event-stream".', 406);
    }
    await this.responder.stream(req, () => this.streams.open(session.id, bearerToken(req.headers.authorization)!, res));
  }

  @Delete()
  async delete(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') throw new RpcError(RpcCode.InvalidRequest, 'Send the Mcp-Session-Id header of the session to end.', 400);
    const client = await this.sessions.end(id, req.mcp.principal!);
    // Recorded with the session's client, like every other request of the session.
    return this.responder.answer(req, res, 204, { session: { id, client } });
  }

  /** Any other HTTP method: a JSON-RPC error too, never the framework's HTML or REST error. Declared last so it only takes what the others leave. */
  @All()
  other(@Req() req: McpRequest): never {
    throw new RpcError(RpcCode.ServerError, `Method not allowed: ${req.method} /mcp is not served; POST JSON-RPC messages to /mcp.`, 405, undefined, ALLOW);
  }
}

/** Whether the client names text/event-stream (MCP: a GET stream's client MUST; a wildcard does not say it can read SSE). */
function acceptsEventStream(accept: string | undefined): boolean {
  return /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept ?? '');
}

/** Aborted when the client goes away before its answer is sent. */
function closed(res: Response): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}
