import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { cleanCapabilities, isLogLevel, LOG_LEVELS } from '../protocol/client-capabilities.js';
import { takesViews } from '../protocol/views.js';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import {
  DetachToTask,
  McpMethod,
  ToolTasks,
  type MethodCall,
  type MethodHandler,
  type MethodRegistration,
  type NotificationCall,
} from '../protocol/mcp-method.js';
import type { MethodResult } from '../protocol/method-result.js';
import { RequestCancellation } from '../protocol/request-cancellation.js';
import { ToolAccess } from '../protocol/tool-access.js';
import { initializeClient } from './mcp-request.js';
import { decorateModern } from './modern-result.js';
import { ALL_VERSIONS, negotiate, type Era } from './protocol-version.js';
import { SessionsService } from './sessions.service.js';
import { ToolDispatcher } from './tool-dispatcher.js';

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

/** MCP 2025-11-25 "Resource not found"; 2026-07-28 answers -32602 with the URI in `data` instead (SEP-2164). */
const LEGACY_RESOURCE_NOT_FOUND = -32002;

/**
 * The JSON-RPC method tables of /mcp, one per era, built once at boot from every provider method
 * marked {@link McpMethod} (the features' in their own folders, the transport's own below). A method
 * not in its request's table is -32601 (with HTTP 404 in the modern era, as 2026-07-28 asks); a modern
 * result is shaped by decorateModern.
 *
 * Served in the modern era only where a registration says so: `initialize`, `ping`, `logging/setLevel`
 * and `resources/subscribe`/`unsubscribe` are not in the 2026-07-28 revision, `subscriptions/listen` is
 * not offered (discover advertises no listChanged or subscribe), nor are the tasks extension's removed
 * `tasks/result` and `tasks/list`.
 */
@Injectable()
export class McpMethods implements OnModuleInit {
  private readonly log = new Logger(McpMethods.name);
  private readonly tables: Record<Era, Map<string, MethodHandler>> = { legacy: new Map(), modern: new Map() };
  /** What server/discover advertises: the merged `advertises` of the modern table's methods. */
  private readonly advertised: Record<string, Record<string, unknown>> = {};
  /** The tasks extension's provider, if the app has one (a tools/call of a task-capable tool becomes a task). */
  private toolTasks?: ToolTasks;
  /** Notifications the server acts on; any other is acknowledged and ignored. */
  private readonly notifications: ReadonlyMap<string, Notification>;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly sessions: SessionsService,
    private readonly access: ToolAccess,
    private readonly tools: ToolDispatcher,
    private readonly cancellation: RequestCancellation,
  ) {
    this.notifications = new Map<string, Notification>([['notifications/cancelled', (call) => this.cancelled(call)]]);
  }

  /** Finds every registered method once; a method claimed twice in one era refuses the boot. */
  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      if (instance instanceof ToolTasks) this.toolTasks = instance;
      for (const key of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
        const registration = Reflect.getMetadata(McpMethod.KEY, instance[key] as object) as MethodRegistration | undefined;
        if (!registration) continue;
        const handler = (instance[key] as MethodHandler).bind(instance);
        for (const era of registration.eras) {
          if (this.tables[era].has(registration.name))
            throw new Error(`Two providers serve the MCP method "${registration.name}" in the ${era} era (the second: ${instance.constructor.name}.${key}).`);
          this.tables[era].set(registration.name, handler);
        }
        if (registration.advertises && registration.eras.includes('modern')) {
          for (const [name, value] of Object.entries(registration.advertises)) this.advertised[name] = { ...this.advertised[name], ...value };
        }
      }
    }
    this.log.debug(`MCP methods: ${[...this.tables.legacy.keys()].join(', ')}; 2026-07-28: ${[...this.tables.modern.keys()].join(', ')}`);
  }

  /** Acts on a notification; never fails (a notification has no answer to carry an error). */
  async notify(method: string, call: NotificationCall): Promise<void> {
    await this.notifications.get(method)?.(call);
  }

  run(method: string, call: MethodCall): Promise<MethodResult> | MethodResult {
    if (call.era === 'modern') return this.runModern(method, call);
    const handler = this.tables.legacy.get(method);
    if (!handler) throw new RpcError(RpcCode.MethodNotFound, `Method not found: ${method}`);
    return handler(call);
  }

  /** A 2026-07-28 request: its own table (404 outside it), its result decorated, its errors in the revision's codes. */
  private async runModern(method: string, call: MethodCall): Promise<MethodResult> {
    const handler = this.tables.modern.get(method);
    if (!handler)
      throw new RpcError(
        RpcCode.MethodNotFound,
        `Method not found: ${method} is not served in MCP 2026-07-28 (served: ${[...this.tables.modern.keys()].join(', ')}).`,
        404,
      );
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
   * `server/discover` (2026-07-28): the versions spoken and what the modern table's methods advertise.
   * No listChanged or subscribe (2026-07-28 delivers them on subscriptions/listen, not offered) and no
   * logging (a request asks for log messages in its `_meta`).
   */
  @McpMethod('server/discover', { eras: ['modern'] })
  discover(): MethodResult {
    return { result: { supportedVersions: [...ALL_VERSIONS], capabilities: this.advertised, instructions: MODERN_INSTRUCTIONS } };
  }

  @McpMethod('ping', { eras: ['legacy'] })
  ping(): MethodResult {
    return { result: {} };
  }

  @McpMethod('initialize', { eras: ['legacy'] })
  async initialize({ principal, params }: MethodCall): Promise<MethodResult> {
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      throw RpcError.invalidParams('Invalid params: initialize takes an object with protocolVersion, capabilities and clientInfo.');
    const { protocolVersion, capabilities } = params as { protocolVersion?: unknown; capabilities?: unknown };
    if (typeof protocolVersion !== 'string') throw RpcError.invalidParams('Invalid params: "protocolVersion" must be a string.');
    const client = initializeClient(params);
    const version = negotiate(protocolVersion);
    const session = await this.sessions.create(principal, version, client, cleanCapabilities(capabilities));
    return {
      result: {
        protocolVersion: version,
        capabilities: {
          tools: { listChanged: false },
          resources: { subscribe: true, listChanged: false },
          prompts: { listChanged: false },
          completions: {},
          logging: {},
        },
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
      this.log.debug(
        `notifications/cancelled for request ${JSON.stringify(requestId)} without Mcp-Session-Id ignored: it cannot tell which client's call it means`,
      );
      return;
    }
    await this.cancellation.cancel(principal, requestKey(session.id, requestId));
  }

  @McpMethod('tools/list', { advertises: { tools: {} } })
  listTools({ principal, client }: MethodCall): MethodResult {
    return { result: this.access.list(principal, takesViews(client.capabilities)) };
  }

  @McpMethod('tools/call')
  async callTool(call: MethodCall): Promise<MethodResult> {
    const { principal, session, era, client, id, params, signal, stream } = call;
    // 2026-07-28: a tool that supports tasks runs as one when the request declares the extension.
    const name = params !== null && typeof params === 'object' ? (params as { name?: unknown }).name : undefined;
    const definition = era === 'modern' && this.toolTasks && typeof name === 'string' ? this.access.find(principal, name)?.definition : undefined;
    const tasks = this.toolTasks;
    if (definition?.taskSupport === 'optional' && tasks?.declared(client)) {
      const start = () => tasks.start(call, definition.name);
      if (!definition.asksBeforeTask) return start();
      // It asks first (input_required rounds in this request), then becomes a task where it says so.
      try {
        return await this.tools.call({ principal, session, era, client, params, signal, stream, detachable: true });
      } catch (err) {
        if (err instanceof DetachToTask) return start();
        throw err;
      }
    }
    // Only a session's requests can be cancelled by notifications/cancelled (see cancelled()).
    return this.tools.call({ principal, session, era, client, params, signal, stream, requestKey: session ? requestKey(session.id, id) : undefined });
  }

  /** `logging/setLevel {level}`: the session's level, on every instance from now on. */
  @McpMethod('logging/setLevel', { eras: ['legacy'] })
  async setLevel({ principal, session, params }: MethodCall): Promise<MethodResult> {
    const level = params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as { level?: unknown }).level : undefined;
    if (!isLogLevel(level)) throw RpcError.invalidParams(`Invalid params: "level" must be one of ${LOG_LEVELS.join(', ')}.`);
    if (!session)
      throw RpcError.invalidParams('logging/setLevel needs a session: send the Mcp-Session-Id header that initialize answered; log messages go to a session.');
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
