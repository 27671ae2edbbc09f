import type { Request } from 'express';
import type { Principal } from '../auth/principal.js';
import type { RequestId, RpcMessage } from './json-rpc.js';
import type { CallStream } from './call-stream.js';
import type { ProtocolVersion } from './protocol-version.js';
import type { SessionInfo } from './sessions.service.js';

/** What the MCP pipeline learns about a request as it passes each stage, in the order of checks. */
export interface McpState {
  startedAt: number;
  /** The parsed body, or the error that parsing it raised. */
  message?: RpcMessage | unknown;
  parseError?: { code: number; message: string; status: number };
  id: RequestId;
  /**
   * What the activity log and metrics name the request by, read with the body: the JSON-RPC method it
   * names, or the HTTP method of a request without a body (GET, DELETE...).
   */
  method?: string;
  /** The tool a `tools/call` names, as the activity log records it (also when the call is refused). */
  tool?: string;
  /** Who calls (CredentialGuard). */
  principal?: Principal;
  /** The session the request was sent in, null without one (SessionGuard). */
  session?: SessionInfo | null;
  /** The protocol version a message speaks (ProtocolVersionGuard); null for `initialize`, which negotiates one. */
  version?: ProtocolVersion | null;
  /** The answer of a request: plain JSON, or an event stream once the server has something to send before it. */
  stream?: CallStream;
}

export type McpRequest = Request & { mcp: McpState };
