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
  /** The rate limit in the 2025 era. */
  RateLimited: -32029,
  /** The rate limit in the 2026-07-28 era, where -32020..-32099 are reserved for the specification. */
  RateLimitedModern: 429,
  /** MCP 2026-07-28: a header differs from the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name). */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability it did not declare (HTTP 400). */
  MissingCapability: -32021,
  /** MCP 2026-07-28: a protocol version this server does not speak (HTTP 400). */
  UnsupportedVersion: -32022,
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

  /**
   * MCP 2026-07-28 MissingRequiredClientCapabilityError: the request cannot be served without client
   * capabilities its `_meta` did not declare, e.g. `{sampling: {}}` or
   * `{extensions: {"io.modelcontextprotocol/tasks": {}}}`. HTTP 400, `data.requiredCapabilities`.
   */
  static missingCapability(capabilities: Record<string, unknown>, message?: string): RpcError {
    const names = Object.keys(capabilities).join(', ');
    return new RpcError(
      RpcCode.MissingCapability,
      message ?? `Missing client capability: this request needs ${names}; declare it in params._meta["io.modelcontextprotocol/clientCapabilities"].`,
      400,
      { requiredCapabilities: capabilities },
    );
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
