import { Injectable, type PipeTransform } from '@nestjs/common';
import { RpcCode, RpcError, type RpcMessage } from '../protocol/json-rpc.js';
import type { McpRequest } from './mcp-request.js';

/**
 * The JSON-RPC envelope, the last check before the method runs (after the credential, session and
 * version are known, so a refusal is logged): the parsed body becomes a message, or -32700 / -32600.
 * McpController's first step applies it to the request.
 */
@Injectable()
export class RpcEnvelopePipe implements PipeTransform<McpRequest, RpcMessage> {
  transform(req: McpRequest): RpcMessage {
    const state = req.mcp;
    if (state.parseError) throw new RpcError(state.parseError.code, state.parseError.message, state.parseError.status);
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      // 400 like every -32600 (docs/protocol.md#errors-and-http-statuses), not 415.
      throw new RpcError(RpcCode.InvalidRequest, 'Invalid request: send the JSON-RPC message with Content-Type: application/json.', 400);
    }
    const message = state.message;
    if (Array.isArray(message)) throw new RpcError(RpcCode.InvalidRequest, 'Batches are not supported', 400);
    if (message === null || typeof message !== 'object')
      throw new RpcError(RpcCode.InvalidRequest, 'Invalid request: expected a JSON-RPC 2.0 message object.', 400);
    const m = message as Record<string, unknown>;
    const validId = !('id' in m) || typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id));
    const isRequest = typeof m.method === 'string';
    const isResponse = !('method' in m) && ('result' in m || 'error' in m) && 'id' in m;
    if (m.jsonrpc !== '2.0' || !validId || !(isRequest || isResponse)) {
      throw new RpcError(
        RpcCode.InvalidRequest,
        'Invalid request: expected {"jsonrpc": "2.0", "method": string, "id"?: string | number, "params"?: object}.',
        400,
      );
    }
    return m as unknown as RpcMessage;
  }
}
