import { Injectable, Logger } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Principal } from '../auth/principal.js';
import { CompletionsService } from '../completions/completions.service.js';
import { PromptsService } from '../prompts/prompts.service.js';
import { ResourceMethods } from '../resources/resource-methods.js';
import { declaresTasks, inputResponsesParam, taskIdParam, tasksCapabilityMissing, TASKS_EXTENSION } from '../tasks/task.js';
import { TasksService, taskRequestKey, type TaskRunner } from '../tasks/tasks.service.js';
import { CallStream } from './call-stream.js';
import { cleanCapabilities, isLogLevel, LOG_LEVELS } from './client-capabilities.js';
import { InputRequired, InputRequests } from './input-requests.js';
import { RpcCode, RpcError, type RequestId } from './json-rpc.js';
import type { MethodResult } from './method-result.js';
import { initializeClient, type RequestClient } from './mcp-request.js';
import { decorateModern } from './modern-result.js';
import { ALL_VERSIONS, negotiate, type Era } from './protocol-version.js';
import { RequestCancellation } from './request-cancellation.js';
import { SessionsService, type SessionInfo } from './sessions.service.js';
import { ToolAccess } from './tool-access.js';
import { DetachToTask, ToolDispatcher } from './tool-dispatcher.js';

/** A notification from the client (no answer but 202). */
export interface NotificationCall {
  principal: Principal;
  /** The session it was sent in; null for a stateless client. */
  session: SessionInfo | null;
  params: unknown;
}

/** A JSON-RPC request from the client. */
export interface MethodCall extends NotificationCall {
  id: RequestId;
  /** The era the request speaks (protocol-version.ts), decided once by ProtocolVersionGuard. */
  era: Era;
  /** Its client's capabilities, identity and log level, from the session or `_meta`. */
  client: RequestClient;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** The request's answer: notifications and server→client requests before the response go out on it. */
  stream: CallStream;
}

type Method = (call: MethodCall) => Promise<MethodResult> | MethodResult;
type Notification = (call: NotificationCall) => Promise<void>;

export const SERVER_NAME = 'reblog-mcp';
export const SERVER_VERSION = readVersion();

const instructions = (resourceUse: string) =>
  'Reblog MCP server. Tools act on your articles and projects. ' +
  'Call list_projects to get project ids; when your credential reaches several projects, pass one as project_id. ' +
  'Writing tools may first answer status "setup_required" with questions: put them to the user, save the answers with configure_agent, then call the tool again. ' +
  'Long jobs (write_article, generate_image) return a job id when they outlive the call: poll get_job, list them with list_jobs, and stop one with cancel_job. ' +
  `Your articles are also resources (reblog://projects/<project_id>/articles/<handle>, as markdown with their metadata; images as PNG), which you can ${resourceUse}. ` +
  'Prompts offer writing workflows (draft_article, edit_for_tone, publish_checklist) with their arguments completed from your own projects and articles.';

/** What initialize tells a 2025 client. */
export const INSTRUCTIONS = instructions('read, attach and subscribe to');
/** What server/discover tells a 2026-07-28 client, which has no resources/subscribe. */
export const MODERN_INSTRUCTIONS = instructions('read and attach');

/**
 * The methods of MCP 2026-07-28 this server serves, where the legacy table has them (plus
 * `server/discover`, which only it has). Not in it, so HTTP 404 + -32601 in the modern era:
 * `initialize`, `ping`, `logging/setLevel`, `resources/subscribe` and `/unsubscribe` (removed from the
 * revision), `subscriptions/listen` (not offered: discover advertises no listChanged or subscribe), and
 * the tasks extension's removed `tasks/result` and `tasks/list`.
 */
const MODERN_METHODS = ['tools/list', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list', 'resources/templates/list', 'resources/read', 'completion/complete'];

/** MCP 2025-11-25 "Resource not found"; 2026-07-28 answers -32602 with the URI in `data` instead (SEP-2164). */
const LEGACY_RESOURCE_NOT_FOUND = -32002;

/**
 * The JSON-RPC method tables of /mcp, one per era. A method not in its request's table is -32601 (with
 * HTTP 404 in the modern era, as 2026-07-28 asks); a modern result is shaped by decorateModern.
 */
@Injectable()
export class McpMethods {
  private readonly log = new Logger(McpMethods.name);
  private readonly table: ReadonlyMap<string, Method>;
  private readonly modern: ReadonlyMap<string, Method>;
  /** Notifications the server acts on; any other is acknowledged and ignored. */
  private readonly notifications: ReadonlyMap<string, Notification>;

  constructor(
    private readonly sessions: SessionsService,
    private readonly access: ToolAccess,
    private readonly tools: ToolDispatcher,
    private readonly cancellation: RequestCancellation,
    private readonly prompts: PromptsService,
    private readonly completions: CompletionsService,
    private readonly resources: ResourceMethods,
    private readonly inputs: InputRequests,
    private readonly tasks: TasksService,
  ) {
    this.table = new Map<string, Method>([
      ['initialize', (call) => this.initialize(call)],
      ['ping', () => ({ result: {} })],
      ['tools/list', ({ principal }) => ({ result: this.access.list(principal) })],
      ['tools/call', (call) => this.callTool(call)],
      ['resources/list', (call) => this.resources.list(call)],
      ['resources/templates/list', (call) => this.resources.templates(call)],
      ['resources/read', (call) => this.resources.read(call)],
      ['resources/subscribe', (call) => this.resources.subscribe(call)],
      ['resources/unsubscribe', (call) => this.resources.unsubscribe(call)],
      ['prompts/list', ({ principal }) => ({ result: this.prompts.list(principal) })],
      ['prompts/get', (call) => this.getPrompt(call)],
      ['completion/complete', async ({ principal, params }) => ({ result: await this.completions.complete(principal, params) })],
      ['logging/setLevel', (call) => this.setLevel(call)],
    ]);
    this.notifications = new Map<string, Notification>([['notifications/cancelled', (call) => this.cancelled(call)]]);
    this.modern = new Map<string, Method>([
      ['server/discover', () => this.discover()],
      ...MODERN_METHODS.filter((name) => this.table.has(name)).map((name) => [name, this.table.get(name)!] as const),
      // The tasks extension (SEP-2663), for requests that declare it.
      ['tasks/get', async (call) => ({ result: await this.tasks.get(call.principal, this.taskId('tasks/get', call)) })],
      ['tasks/update', (call) => this.updateTask(call)],
      ['tasks/cancel', (call) => this.cancelTask(call)],
    ]);
  }

  /** Acts on a notification; never fails (a notification has no answer to carry an error). */
  async notify(method: string, call: NotificationCall): Promise<void> {
    await this.notifications.get(method)?.(call);
  }

  run(method: string, call: MethodCall): Promise<MethodResult> | MethodResult {
    if (call.era === 'modern') return this.runModern(method, call);
    const handler = this.table.get(method);
    if (!handler) throw new RpcError(RpcCode.MethodNotFound, `Method not found: ${method}`);
    return handler(call);
  }

  /** A 2026-07-28 request: its own table (404 outside it), its result decorated, its errors in the revision's codes. */
  private async runModern(method: string, call: MethodCall): Promise<MethodResult> {
    const handler = this.modern.get(method);
    if (!handler) throw new RpcError(RpcCode.MethodNotFound, `Method not found: ${method} is not served in MCP 2026-07-28 (served: ${[...this.modern.keys()].join(', ')}).`, 404);
    let out: MethodResult;
    try {
      out = await handler(call);
    } catch (err) {
      if (err instanceof RpcError && err.code === LEGACY_RESOURCE_NOT_FOUND) {
        const uri = (call.params as { uri?: unknown } | undefined)?.uri;
        throw new RpcError(RpcCode.InvalidParams, err.message, err.httpStatus, { ...(err.data as object | undefined), uri });
      }
      throw err;
    }
    return out.result === undefined ? out : { ...out, result: decorateModern(method, out.result, { name: SERVER_NAME, version: SERVER_VERSION }) };
  }

  /**
   * `server/discover` (2026-07-28): the versions spoken and the capabilities the modern table serves.
   * No listChanged or subscribe (2026-07-28 delivers them on subscriptions/listen, not offered) and no
   * logging (a request asks for log messages in its `_meta`).
   */
  private discover(): MethodResult {
    const has = (name: string) => this.modern.has(name);
    const capabilities: Record<string, object> = {};
    if (has('tools/list')) capabilities.tools = {};
    if (has('prompts/list')) capabilities.prompts = {};
    if (has('resources/list')) capabilities.resources = {};
    if (has('completion/complete')) capabilities.completions = {};
    if (has('tasks/get')) capabilities.extensions = { [TASKS_EXTENSION]: {} };
    return { result: { supportedVersions: [...ALL_VERSIONS], capabilities, instructions: MODERN_INSTRUCTIONS } };
  }

  private async initialize({ principal, params }: MethodCall): Promise<MethodResult> {
    if (params === null || typeof params !== 'object' || Array.isArray(params)) throw RpcError.invalidParams('Invalid params: initialize takes an object with protocolVersion, capabilities and clientInfo.');
    const { protocolVersion, capabilities } = params as { protocolVersion?: unknown; capabilities?: unknown };
    if (typeof protocolVersion !== 'string') throw RpcError.invalidParams('Invalid params: "protocolVersion" must be a string.');
    const client = initializeClient(params);
    const version = negotiate(protocolVersion);
    const session = await this.sessions.create(principal, version, client, cleanCapabilities(capabilities));
    return {
      result: {
        protocolVersion: version,
        capabilities: { tools: { listChanged: false }, resources: { subscribe: true, listChanged: false }, prompts: { listChanged: false }, completions: {}, logging: {} },
        serverInfo: { name: SERVER_NAME, version: SERVER_VERSION },
        instructions: INSTRUCTIONS,
      },
      // The new session is this request's own in the activity log: its client is known from now on.
      session,
      headers: { 'Mcp-Session-Id': session.id },
    };
  }

  /**
   * `notifications/cancelled`: stops the work of the named in-flight request of this session,
   * whichever instance runs it. Without a session it cancels nothing: a cancellation names a request
   * of the same session (MCP "Cancellation"), and stateless clients of one credential reuse request
   * ids, so a sessionless one could name the call of any of them.
   */
  private async cancelled({ principal, params, session }: NotificationCall): Promise<void> {
    const requestId = params !== null && typeof params === 'object' ? (params as { requestId?: unknown }).requestId : undefined;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    if (session === null) {
      this.log.debug(`notifications/cancelled for request ${JSON.stringify(requestId)} without Mcp-Session-Id ignored: it cannot tell which client's call it means`);
      return;
    }
    await this.cancellation.cancel(principal, requestKey(session.id, requestId));
  }

  private async callTool({ principal, session, era, client, id, params, signal, stream }: MethodCall): Promise<MethodResult> {
    // 2026-07-28: a tool that supports tasks runs as one when the request declares the extension.
    const name = params !== null && typeof params === 'object' ? (params as { name?: unknown }).name : undefined;
    const definition = era === 'modern' && typeof name === 'string' ? this.access.find(principal, name)?.definition : undefined;
    const support = definition?.taskSupport ?? 'forbidden';
    if (definition && support !== 'forbidden') {
      if (declaresTasks(client.capabilities)) {
        const { _meta: _ignored, task: _hint, ...call } = params as Record<string, unknown>;
        const start = () => this.tasks.start(principal, definition.name, { params: call, capabilities: client.capabilities }, this.taskRunner(principal, client));
        if (!definition.asksBeforeTask) return start();
        // It asks first (input_required rounds in this request), then becomes a task where it says so.
        try {
          return await this.tools.call({ principal, session, era, client, params, signal, stream, detachable: true });
        } catch (err) {
          if (err instanceof DetachToTask) return start();
          throw err;
        }
      }
      if (support === 'required') throw tasksCapabilityMissing(`the tool ${definition.name}, which only runs as a task,`);
    }
    // Only a session's requests can be cancelled by notifications/cancelled (see cancelled()).
    return this.tools.call({ principal, session, era, client, params, signal, stream, requestKey: session ? requestKey(session.id, id) : undefined });
  }

  /** The taskId of a tasks/* request that declared the extension (-32021 otherwise, -32602 without a taskId). */
  private taskId(method: string, { client, params }: MethodCall): string {
    if (!declaresTasks(client.capabilities)) throw tasksCapabilityMissing(method);
    return taskIdParam(method, params);
  }

  /** `tasks/update {taskId, inputResponses}`: answers to the task's questions; it resumes once all are in. */
  private async updateTask(call: MethodCall): Promise<MethodResult> {
    const taskId = this.taskId('tasks/update', call);
    await this.tasks.update(call.principal, taskId, inputResponsesParam(call.params), this.taskRunner(call.principal, call.client));
    return { result: {} };
  }

  /** `tasks/cancel {taskId}`: the task ends cancelled, its run stops wherever it runs, and so do the jobs it started. */
  private async cancelTask(call: MethodCall): Promise<MethodResult> {
    const taskId = this.taskId('tasks/cancel', call);
    if (await this.tasks.cancel(call.principal, taskId)) await this.cancellation.cancel(call.principal, taskRequestKey(taskId));
    return { result: {} };
  }

  /** Runs a task's tool call as a stateless 2026-07-28 call of the client that created the task. */
  private taskRunner(principal: Principal, client: RequestClient): TaskRunner {
    return ({ capabilities }, params, signal, requestKey) =>
      this.tools.call({ principal, session: null, era: 'modern', client: { ...client, capabilities, logLevel: null }, params, signal, stream: CallStream.detached(), requestKey });
  }

  /** `prompts/get`; in the 2026-07-28 era a prompt that asks the client ends with `input_required` until answered. */
  private async getPrompt({ principal, session, era, client, params, signal, stream }: MethodCall): Promise<MethodResult> {
    try {
      const asker = (name: string, args: unknown) => this.inputs.forCall({ principal, era, client, session, stream, signal, method: 'prompts/get', name, args, params });
      return { result: await this.prompts.get(principal, params, asker) };
    } catch (err) {
      if (err instanceof InputRequired) return { result: err.result, outcome: err.outcome };
      throw err;
    }
  }

  /** `logging/setLevel {level}`: the session's level, on every instance from now on. */
  private async setLevel({ principal, session, params }: MethodCall): Promise<MethodResult> {
    const level = params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as { level?: unknown }).level : undefined;
    if (!isLogLevel(level)) throw RpcError.invalidParams(`Invalid params: "level" must be one of ${LOG_LEVELS.join(', ')}.`);
    if (!session) throw RpcError.invalidParams('logging/setLevel needs a session: send the Mcp-Session-Id header that initialize answered; log messages go to a session.');
    await this.sessions.setLogLevel(session, principal, level);
    return { result: {} };
  }
}

/** Names an in-flight request of a session across instances: the session and its JSON-RPC id. */
function requestKey(sessionId: string, id: unknown): string {
  return `${sessionId}:${JSON.stringify(id)}`;
}

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(resolve('package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
