import { ArgumentsHost, Catch, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import type { Outcome } from '../activity/activity-entry.entity.js';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import type { McpRequest } from './mcp-request.js';
import { McpResponder } from './mcp-responder.js';

/** Every refusal on /mcp is a JSON-RPC error body with its HTTP status, recorded when the caller is known. */
@Catch()
export class McpErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('Mcp');

  constructor(private readonly responder: McpResponder) {}

  catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    let err: RpcError;
    if (exception instanceof RpcError) err = exception;
    else {
      this.log.error((exception as Error)?.stack ?? String(exception));
      // docs/protocol.md#errors-and-http-statuses: -32603 answers a well-formed request with 200, like -32601 and -32602.
      err = new RpcError(RpcCode.InternalError, 'Internal error (for example the database did not answer); it is logged. Try again in a few seconds.', 200);
    }
    const http = host.switchToHttp();
    return this.responder.refuse(http.getRequest<McpRequest>(), http.getResponse<Response>(), err, outcomeOf(err));
  }
}

function outcomeOf(err: RpcError): Outcome {
  // Only the rate limit answers 429 (its JSON-RPC code depends on the era).
  if (err.httpStatus === 429) return 'rate_limited';
  if (err.httpStatus === 403 || err.httpStatus === 401) return 'denied';
  return 'invalid';
}
