import type { Span } from '@opentelemetry/api';
import type { Request } from 'express';
import type { Principal } from '../auth/principal.js';
import type { RequestId, RpcMessage } from '../protocol/json-rpc.js';
import type { CallStream } from '../protocol/call-stream.js';
import type { LogLevel } from '../protocol/client-capabilities.js';
import type { Era, ModernVersion, ProtocolVersion } from './protocol-version.js';
import type { SessionInfo } from './sessions.service.js';

/**
 * Who the client of this request says it is and what it takes: from its session in the legacy era
 * (initialize's clientInfo and capabilities, logging/setLevel), from `params._meta` in the modern one.
 */
export interface RequestClient {
  capabilities: Record<string, Record<string, unknown>>;
  info: { name: string; version: string } | null;
  /** The least severe `notifications/message` level the client wants; null: none. */
  logLevel: LogLevel | null;
}

/** The client an `initialize` names in its params (`clientInfo`, a name at least), cut to the lengths kept; null without one. */
export function initializeClient(params: unknown): { name: string; version: string } | null {
  const info = params !== null && typeof params === 'object' ? (params as { clientInfo?: { name?: unknown; version?: unknown } }).clientInfo : undefined;
  if (!info || typeof info !== 'object' || typeof info.name !== 'string') return null;
  return { name: info.name.slice(0, 200), version: typeof info.version === 'string' ? info.version.slice(0, 100) : '' };
}

/** A legacy request's client, as its session knows it (none without a session). */
export function sessionClient(session: SessionInfo | null | undefined): RequestClient {
  return { capabilities: session?.capabilities ?? {}, info: session?.client ?? null, logLevel: session?.logLevel ?? null };
}

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
  /**
   * The protocol version a message speaks: a legacy one from its header (ProtocolVersionGuard; null for
   * `initialize`, which negotiates one), a modern one from `_meta` (EraGuard).
   */
  version?: ProtocolVersion | ModernVersion | null;
  /** The era the request speaks (EraGuard, protocol-version.ts decideEra); legacy when absent. */
  era?: Era;
  /** Its client: from the session (legacy) or `_meta` (modern). */
  client?: RequestClient;
  /** The answer of a request: plain JSON, or an event stream once the server has something to send before it. */
  stream?: CallStream;
  /** The request's SERVER span, while tracing is on (mcp-span.ts); ended with the answer. */
  span?: Span;
}

export type McpRequest = Request & { mcp: McpState };
