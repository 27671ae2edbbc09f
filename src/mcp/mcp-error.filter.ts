import { ArgumentsHost, Catch, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import type { Outcome } from '../activity/activity-entry.entity.js';
import { errorBody, RpcCode, RpcError } from './json-rpc.js';
import type { McpRequest } from './mcp-request.js';
import { McpResponder } from './mcp-responder.js';

/** Every refusal on /mcp is a JSON-RPC error body with its HTTP status, recorded when the caller is known. */
@Catch()
export class McpErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('Mcp');

  constructor(private readonly responder: McpResponder) {}

  catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    const req = host.switchToHttp().getRequest<McpRequest>();
    const res = host.switchToHttp().getResponse<Response>();
    let err: RpcError;
    if (exception instanceof RpcError) err = exception;
    else {
      this.log.error((exception as Error)?.stack ?? String(exception));
      // spec/mcp.md: -32603 answers a well-formed request with 200, like -32601 and -32602.
      err = new RpcError(RpcCode.InternalError, 'Internal error (for example the database did not answer); it is logged. Try again in a few seconds.', 200);
    }
    const message = req.mcp?.message as { method?: unknown; params?: { name?: unknown } } | undefined;
    // A bodiless request (DELETE, GET...) is recorded by its HTTP method.
    const method = typeof message?.method === 'string' ? message.method : req.method === 'POST' ? '(invalid)' : req.method;
    const name = method === 'tools/call' ? message?.params?.name : undefined;
    const recorded = { method, tool: typeof name === 'string' ? name.slice(0, 100) : null, outcome: outcomeOf(err), error: { code: err.code, message: err.message } };
    return this.responder.send(req, res, err.httpStatus, errorBody(req.mcp?.id ?? null, err.code, err.message, err.data), recorded, err.headers);
  }
}

function outcomeOf(err: RpcError): Outcome {
  if (err.code === RpcCode.RateLimited) return 'rate_limited';
  if (err.httpStatus === 403 || err.httpStatus === 401) return 'denied';
  return 'invalid';
}
