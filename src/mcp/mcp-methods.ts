import { Injectable, Logger } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Outcome } from '../activity/activity-entry.entity.js';
import type { Principal } from '../auth/principal.js';
import { RpcCode, RpcError } from './json-rpc.js';
import type { McpRequest } from './mcp-request.js';
import { requestKey } from './progress-stream.js';
import { negotiate } from './protocol-version.js';
import { RequestCancellation } from './request-cancellation.js';
import { SessionsService } from './sessions.service.js';
import { ToolAccess } from './tool-access.js';
import { ToolDispatcher } from './tool-dispatcher.js';

export interface MethodCall {
  req: McpRequest;
  principal: Principal;
  params: unknown;
  signal: AbortSignal;
  progress: (fraction: number, message?: string) => void;
  /** Names the request across instances (its session and JSON-RPC id), for `notifications/cancelled`; none outside a session. */
  requestKey?: string;
}

/** A notification from the client (no answer but 202). */
export interface NotificationCall {
  principal: Principal;
  params: unknown;
  sessionId: string | null;
}

export interface MethodResult {
  /** The JSON-RPC `result`: a value, or JSON text already serialised. */
  result: unknown;
  outcome?: Outcome;
  tool?: string;
  projectId?: string | null;
  headers?: Record<string, string>;
}

type Method = (call: MethodCall) => Promise<MethodResult> | MethodResult;
type Notification = (call: NotificationCall) => Promise<void>;

export const SERVER_NAME = 'reblog-mcp';
export const SERVER_VERSION = readVersion();

export const INSTRUCTIONS =
  'Reblog MCP server. Tools act on your articles and projects. ' +
  'Call list_projects to get project ids; when your credential reaches several projects, pass one as project_id. ' +
  'Writing tools may first answer status "setup_required" with questions: put them to the user, save the answers with configure_agent, then call the tool again. ' +
  'Long jobs (write_article, generate_image) return a job id when they outlive the call: poll get_job, list them with list_jobs, and stop one with cancel_job.';

/** The JSON-RPC method table of /mcp. A method not in it is -32601. */
@Injectable()
export class McpMethods {
  private readonly log = new Logger(McpMethods.name);
  private readonly table: ReadonlyMap<string, Method>;
  /** Notifications the server acts on; any other is acknowledged and ignored. */
  private readonly notifications: ReadonlyMap<string, Notification>;

  constructor(
    private readonly sessions: SessionsService,
    private readonly access: ToolAccess,
    private readonly tools: ToolDispatcher,
    private readonly cancellation: RequestCancellation,
  ) {
    this.table = new Map<string, Method>([
      ['initialize', (call) => this.initialize(call)],
      ['ping', () => ({ result: {} })],
      ['tools/list', ({ principal }) => ({ result: this.access.list(principal) })],
      ['tools/call', (call) => this.callTool(call)],
    ]);
    this.notifications = new Map<string, Notification>([['notifications/cancelled', (call) => this.cancelled(call)]]);
  }

  /** Acts on a notification; never fails (a notification has no answer to carry an error). */
  async notify(method: string, call: NotificationCall): Promise<void> {
    await this.notifications.get(method)?.(call);
  }

  run(method: string, call: MethodCall): Promise<MethodResult> | MethodResult {
    const handler = this.table.get(method);
    if (!handler) throw new RpcError(RpcCode.MethodNotFound, `Method not found: ${method}`);
    return handler(call);
  }

  private async initialize({ req, principal, params }: MethodCall): Promise<MethodResult> {
    if (params === null || typeof params !== 'object' || Array.isArray(params)) throw RpcError.invalidParams('Invalid params: initialize takes an object with protocolVersion, capabilities and clientInfo.');
    const { protocolVersion, clientInfo } = params as { protocolVersion?: unknown; clientInfo?: { name?: unknown; version?: unknown } };
    if (typeof protocolVersion !== 'string') throw RpcError.invalidParams('Invalid params: "protocolVersion" must be a string.');
    const client =
      clientInfo && typeof clientInfo === 'object' && typeof clientInfo.name === 'string'
        ? { name: clientInfo.name.slice(0, 200), version: typeof clientInfo.version === 'string' ? clientInfo.version.slice(0, 100) : '' }
        : null;
    const version = negotiate(protocolVersion);
    const session = await this.sessions.create(principal, version, client);
    req.mcp.sessionId = session.id;
    req.mcp.client = client;
    return {
      result: {
        protocolVersion: version,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: SERVER_NAME, version: SERVER_VERSION },
        instructions: INSTRUCTIONS,
      },
      headers: { 'Mcp-Session-Id': session.id },
    };
  }

  /**
   * `notifications/cancelled`: stops the work of the named in-flight request of this session,
   * whichever instance runs it. Without a session it cancels nothing: a cancellation names a request
   * of the same session (MCP "Cancellation"), and stateless clients of one credential reuse request
   * ids, so a sessionless one could name the call of any of them.
   */
  private async cancelled({ principal, params, sessionId }: NotificationCall): Promise<void> {
    const requestId = params !== null && typeof params === 'object' ? (params as { requestId?: unknown }).requestId : undefined;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    if (sessionId === null) {
      this.log.debug(`notifications/cancelled for request ${JSON.stringify(requestId)} without Mcp-Session-Id ignored: it cannot tell which client's call it means`);
      return;
    }
    await this.cancellation.cancel(principal, requestKey(sessionId, requestId));
  }

  private async callTool({ principal, params, signal, progress, requestKey }: MethodCall): Promise<MethodResult> {
    const out = await this.tools.call({ principal, params, signal, progress, requestKey });
    return { result: out.result, outcome: out.outcome, tool: out.tool, projectId: out.projectId };
  }
}

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(resolve('package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
