/** JSON-RPC 2.0 error codes used on /mcp. */
export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Server-defined: authentication, origin, session. */
  ServerError: -32000,
  SessionNotFound: -32001,
  RateLimited: -32029,
} as const;

export type RequestId = string | number | null;

/** A JSON-RPC error with the HTTP status it is answered with. Thrown anywhere in the MCP pipeline. */
export class RpcError extends Error {
  override name = 'RpcError';

  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus = 200,
    readonly data?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  static invalidParams(message: string): RpcError {
    return new RpcError(RpcCode.InvalidParams, message);
  }
}

/** A parsed JSON-RPC message, as far as the envelope goes. */
export interface RpcMessage {
  jsonrpc: '2.0';
  id?: RequestId;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

export function errorBody(id: RequestId, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
}

export function resultBody(id: RequestId, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${typeof result === 'string' ? result : JSON.stringify(result)}}`;
}
