import type { Request } from 'express';
import type { Principal } from '../auth/principal.js';
import type { RequestId, RpcMessage } from './json-rpc.js';
import type { ProgressStream } from './progress-stream.js';

/** What the MCP pipeline learns about a request as it passes each stage. */
export interface McpState {
  startedAt: number;
  /** The parsed body, or the error that parsing it raised. */
  message?: RpcMessage | unknown;
  parseError?: { code: number; message: string; status: number };
  id: RequestId;
  principal?: Principal;
  sessionId?: string | null;
  client?: { name: string; version: string } | null;
  /** The SSE answer of a call that reports progress, once the client asked for it. */
  stream?: ProgressStream;
}

export type McpRequest = Request & { mcp: McpState };
