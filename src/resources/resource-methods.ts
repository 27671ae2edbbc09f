import { Injectable, Logger } from '@nestjs/common';
import type { Principal, ReachableProject } from '../auth/principal.js';
import { DatabaseNotifications } from '../database/notifications.service.js';
import { RpcError } from '../protocol/json-rpc.js';
import { McpMethod, SessionOutbox } from '../protocol/mcp-method.js';
import type { MethodResult } from '../protocol/method-result.js';
import type { RequestClient } from '../mcp/mcp-request.js';
import type { SessionInfo } from '../mcp/sessions.service.js';
import { takesViews } from '../protocol/views.js';
import { ToolAccess } from '../protocol/tool-access.js';
import { InvalidCursorError, type ResourceContext } from './mcp-resources.decorator.js';
import { ResourceRegistry } from './resource-registry.js';
import { parseUri } from './resource-uris.js';
import { RESOURCES_CHANNEL, SubscriptionsRepository } from './subscriptions.repository.js';

/** MCP's "Resource not found" (2025-11-25: -32002, with the URI in `data`). */
export const RESOURCE_NOT_FOUND = -32002;

/** The longest URI a request may name (a product URI is well under 200 characters). */
const MAX_URI_LENGTH = 2_048;

interface Call {
  principal: Principal;
  session: SessionInfo | null;
  params: unknown;
  client?: RequestClient;
}

/**
 * The `resources/*` methods of /mcp (found at boot by their {@link McpMethod} marks): thin handlers over the {@link ResourceRegistry}, with the one
 * tenancy rule of resources, prompts and completions — a project's articles and media are readable
 * where the credential could run `get_article` — and subscriptions kept in Postgres. Updates of a
 * watched article reach the session's GET stream on whichever instance holds it.
 */
/** How much earlier than the lost connection the missed changes are looked for. */
const CLOCK_SLACK_MS = 5_000;

@Injectable()
export class ResourceMethods {
  private readonly log = new Logger(ResourceMethods.name);

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly access: ToolAccess,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly streams: SessionOutbox,
    notifications: DatabaseNotifications,
  ) {
    notifications.subscribe(RESOURCES_CHANNEL, (articleId) => {
      this.updated(articleId).catch((err: Error) => this.log.warn(`Could not send resource updates of article ${articleId}: ${err.message}`));
    });
    // The changes made while this instance was not listening are found in the table instead (a few
    // seconds early rather than late: the database's clock is not this one, and a spare update is harmless).
    notifications.onReconnect((since) => {
      this.changedSince(new Date(since.getTime() - CLOCK_SLACK_MS)).catch((err: Error) =>
        this.log.warn(`Could not send the resource updates missed while not listening: ${err.message}`),
      );
    });
  }

  @McpMethod('resources/list', { advertises: { resources: {} } })
  async list({ principal, params, client }: Call): Promise<MethodResult> {
    const cursor = field(params, 'cursor', 'resources/list', false);
    try {
      const page = await this.registry.list(this.context(principal, client), cursor);
      return { result: page.nextCursor === undefined ? { resources: page.resources } : page };
    } catch (err) {
      if (err instanceof InvalidCursorError) throw RpcError.invalidParams('Invalid params: "cursor" is not one resources/list gave; list again without it.');
      throw err;
    }
  }

  @McpMethod('resources/templates/list')
  templates({ params }: Call): MethodResult {
    field(params, 'cursor', 'resources/templates/list', false);
    return { result: { resourceTemplates: this.registry.templates() } };
  }

  @McpMethod('resources/read')
  async read({ principal, params, client }: Call): Promise<MethodResult> {
    const uri = field(params, 'uri', 'resources/read', true);
    const contents = await this.registry.read(uri, this.context(principal, client));
    if (!contents) throw notFound(uri);
    return { result: { contents } };
  }

  @McpMethod('resources/subscribe', { eras: ['legacy'] })
  async subscribe({ principal, session, params }: Call): Promise<MethodResult> {
    const uri = field(params, 'uri', 'resources/subscribe', true);
    const sessionId = needSession(session, 'resources/subscribe');
    const found = await this.registry.locate(uri, this.context(principal));
    if (!found) throw notFound(uri);
    if (!(await this.subscriptions.subscribe(sessionId, uri, found.articleId ?? null))) {
      throw RpcError.invalidParams('Invalid params: this session holds the most subscriptions it may (1000); unsubscribe from some first.');
    }
    return { result: {} };
  }

  @McpMethod('resources/unsubscribe', { eras: ['legacy'] })
  async unsubscribe({ session, params }: Call): Promise<MethodResult> {
    const uri = field(params, 'uri', 'resources/unsubscribe', true);
    // Not subscribed, or no longer readable: either way nothing is watched afterwards.
    await this.subscriptions.unsubscribe(needSession(session, 'resources/unsubscribe'), uri);
    return { result: {} };
  }

  /**
   * Where this principal's articles and media are readable: the projects where it could run
   * get_article; and whether its client renders MCP Apps views.
   */
  private context(principal: Principal, client?: RequestClient): ResourceContext {
    const tool = this.access.find(principal, 'get_article');
    const readable = new Map<string, ReachableProject>();
    if (tool) for (const project of this.access.allowedProjects(principal, tool.definition)) readable.set(project.id, project);
    return { principal, readable, views: client !== undefined && takesViews(client.capabilities) };
  }

  /**
   * An article changed: the sessions whose streams this instance holds and that watch it are told,
   * while they may still read it (the credential live, the project still readable: scope, role and
   * disabled tools are as of now, not as of the subscription). A trashed article is a change too.
   */
  private async updated(articleId: string): Promise<void> {
    const sessionIds = this.streams.sessionIds();
    if (sessionIds.length) await this.send(await this.subscriptions.watching(articleId, sessionIds));
  }

  private async changedSince(since: Date): Promise<void> {
    const sessionIds = this.streams.sessionIds();
    if (sessionIds.length) await this.send(await this.subscriptions.changedSince(sessionIds, since));
  }

  private async send(watched: { session_id: string; uri: string }[]): Promise<void> {
    for (const { session_id, uri } of watched) {
      const principal = await this.streams.principal(session_id);
      if (principal === null) this.streams.close(session_id);
      if (!principal) continue;
      // Only product article URIs name an article id in a subscription.
      const projectId = parseUri(uri)?.projectId;
      if (projectId === undefined || !this.context(principal).readable.has(projectId)) continue;
      this.streams.send(session_id, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    }
  }
}

function notFound(uri: string): RpcError {
  return new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, 200, { uri });
}

function needSession(session: SessionInfo | null, method: string): string {
  if (!session) {
    throw RpcError.invalidParams(
      `Invalid params: ${method} needs a session (send the Mcp-Session-Id header that initialize gave): updates are sent on the session's GET /mcp stream.`,
    );
  }
  return session.id;
}

/** `params[name]` as a string (required or optional), or -32602 saying what is wrong. */
function field(params: unknown, name: string, method: string, required: true): string;
function field(params: unknown, name: string, method: string, required: false): string | undefined;
function field(params: unknown, name: string, method: string, required: boolean): string | undefined {
  if (params === undefined && !required) return undefined;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw RpcError.invalidParams(`Invalid params: ${method} takes an object${required ? ` with "${name}"` : ''}.`);
  }
  const value = (params as Record<string, unknown>)[name];
  if (value === undefined && !required) return undefined;
  if (value === undefined) throw RpcError.invalidParams(`Invalid params: ${method} needs "${name}", a string.`);
  if (typeof value !== 'string') throw RpcError.invalidParams(`Invalid params: "${name}" must be a string.`);
  if (name === 'uri' && (value === '' || value.length > MAX_URI_LENGTH))
    throw RpcError.invalidParams(`Invalid params: "uri" must be 1 to ${MAX_URI_LENGTH} characters.`);
  return value;
}
