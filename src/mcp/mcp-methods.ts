import { Injectable } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Outcome } from '../activity/activity-entry.entity.js';
import type { Principal } from '../auth/principal.js';
import { CatalogueService } from './catalogue.service.js';
import { RpcCode, RpcError } from './json-rpc.js';
import type { McpRequest } from './mcp-request.js';
import { negotiate } from './protocol-version.js';
import { SessionsService } from './sessions.service.js';
import { ToolDispatcher } from './tool-dispatcher.js';

export interface MethodCall {
  req: McpRequest;
  principal: Principal;
  params: unknown;
  signal: AbortSignal;
  progress: (fraction: number, message?: string) => void;
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
  private readonly table: ReadonlyMap<string, Method>;

  constructor(
    private readonly sessions: SessionsService,
    private readonly catalogue: CatalogueService,
    private readonly tools: ToolDispatcher,
  ) {
    this.table = new Map<string, Method>([
      ['initialize', (call) => this.initialize(call)],
      ['ping', () => ({ result: {} })],
      ['tools/list', ({ principal }) => ({ result: this.catalogue.list(principal) })],
      ['tools/call', (call) => this.callTool(call)],
    ]);
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

  private async callTool({ principal, params, signal, progress }: MethodCall): Promise<MethodResult> {
    const out = await this.tools.call({ principal, params, signal, progress });
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
