import { DiscoveryService, type DiscoverableDecorator } from '@nestjs/core';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Outcome } from '../activity/activity-entry.entity.js';
import type { ReachableProject, Principal } from '../auth/principal.js';
import type { ProjectRole, Scope } from '../common/tool-names.js';
import type { LogLevel } from './client-capabilities.js';
import type { RequestClient } from '../mcp/mcp-request.js';
import type { Asker } from './input.js';
import type { Era } from '../mcp/protocol-version.js';

/** A JSON Schema of an object (the subset the tools use); a tool's input is declared `as const`, see {@link ToolArgs}. */
export interface ObjectSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: readonly string[];
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** Everything the catalogue publishes and enforces about one tool: one declaration, one source of truth. */
export interface ToolDefinition<Input extends ObjectSchema = ObjectSchema> {
  name: string;
  title: string;
  description: string;
  /** Published as `inputSchema`, compiled into the validator and typing run()'s arguments. Never mentions `project_id`. */
  input: Input;
  /** Published as `outputSchema` when the result has a fixed shape. */
  output?: ObjectSchema;
  scope: Scope;
  /** The lowest project role that may run the tool. */
  role: ProjectRole;
  /** Acts on one project, chosen by `project_id` or inferred. */
  projectScoped: boolean;
  /**
   * The MCP Apps view (a `ui://` resource) a host renders this tool's results in: published as the
   * tool's `_meta.ui.resourceUri` to clients that declare the extension only (docs/protocol.md#mcp-apps-views).
   */
  view?: string;
  /** Accepts object values in arguments it does not declare (none of today's tools). */
  richBody?: boolean;
  /** Overrides the annotations derived from the verb. */
  annotations?: ToolAnnotations;
  /**
   * Whether a 2026-07-28 call may run as a task (tasks extension; 2025-11-25's `execution.taskSupport`):
   * `optional` becomes a task when the request declares the extension and runs synchronously otherwise;
   * `forbidden` (the default) always runs synchronously. (MCP's `required` is not offered: no tool needs it.)
   */
  taskSupport?: 'forbidden' | 'optional';
  /**
   * With task support: the call first runs in its request, asking the client with input_required
   * rounds, and becomes a task when the tool calls {@link ToolContext.detach} (MRTR, then a task).
   */
  asksBeforeTask?: boolean;
}

/** What a tool's handler receives besides its arguments. */
export interface ToolContext {
  principal: Principal;
  /** The resolved project of a project-scoped tool. */
  project: ReachableProject;
  /** Projects where this credential may run this tool (role high enough, tool not disabled). */
  allowedProjects: ReachableProject[];
  /** Aborted when the client cancels the call or disconnects. */
  signal: AbortSignal;
  /** The era the call speaks (legacy 2025, modern 2026-07-28). */
  readonly era: Era;
  /** What the client declared in this request: its session's (legacy) or this request's `_meta` (modern). */
  readonly client: RequestClient;
  /** Reports progress (0..1) to a client that asked for it; a no-op otherwise. Values that do not increase are dropped. */
  progress(fraction: number, message?: string): void;
  /**
   * Whether the call may keep its client waiting longer than the common clients' 60 s timeout: its
   * progress reaches the client, or no request waits for it (a task's run). See CallStream.keptAlive.
   */
  readonly keptAlive: boolean;
  /**
   * Names this request across instances (session and JSON-RPC id), so `notifications/cancelled` can
   * find its work; undefined outside a session, where nothing can cancel it that way.
   */
  requestKey?: string;
  /** Sends `notifications/message` from this tool when `level` is at or above the session's log level; a no-op otherwise. */
  log(level: LogLevel, data: unknown): void;
  /** Whether {@link ask} can reach this client with `method` (see {@link Asker}). */
  canAsk: Asker['canAsk'];
  /**
   * Asks the client (elicitation, sampling, roots) in either era, answers by key (see {@link Asker}): in
   * the 2026-07-28 era an unanswered question ends the call with `input_required` and the tool runs
   * again from the start on the retry, so ask before doing anything that must not happen twice.
   */
  ask: Asker['ask'];
  /**
   * For a tool declared `asksBeforeTask`: from here on the call runs as a task (when the request
   * declared the tasks extension); it runs again from the start as the task, its questions answered.
   * Resolves at once otherwise (and in the task's own run).
   */
  detach(): Promise<void>;
  /** Whether this credential could run the tool `name` in {@link project}, or in the project `projectId` it reaches (scope, role, not disabled). */
  mayRun(name: string, projectId?: string): boolean;
  /** Whether the client renders MCP Apps views (it declared the extension; docs/protocol.md#mcp-apps-views). */
  readonly views: boolean;
  /**
   * The answer of a tool linked to a view, for the project `projectId` (the call's own by default): for a
   * client that renders views, with what the view needs ({@link ToolViewData}); for any other, `answer` untouched.
   */
  view(answer: object | ToolReply, projectId?: string): Promise<object | ToolReply>;
}

export type { ElicitParams, ElicitProperty, ElicitResult } from './input.js';

/** An MCP content block (text, image, audio, resource...). */
export type ContentBlock = Record<string, unknown> & { type: string };

/**
 * A tool answer with more than its JSON object: content after it (a job's image), or how the activity
 * log records the call. A subclass may shape its own result by overriding {@link result}; the product's
 * tools do not (the conformance fixtures answer bare content blocks that way, in test/conformance/).
 */
export class ToolReply {
  constructor(
    readonly value: Record<string, unknown>,
    readonly extraContent: ContentBlock[] = [],
    /** What the activity log records of the call: a tool that answers without doing its work says so. */
    readonly outcome: Outcome = 'ok',
  ) {}

  /** A JSON answer recorded with `outcome` (e.g. `setup_required`: the tool asks for its setup instead of working). */
  static withOutcome(outcome: Outcome, value: object): ToolReply {
    return new ToolReply(value as Record<string, unknown>, [], outcome);
  }

  /** The `tools/call` result: {@link jsonToolResult} of the value, the extra content after its text block. */
  result(): Record<string, unknown> {
    return jsonToolResult(this.value, this.extraContent);
  }
}

/**
 * A `tools/call` result (docs/protocol.md#toolscall): the tool's JSON object as one pretty-printed
 * text block plus `structuredContent`, with `extra` content after the text block.
 */
export function jsonToolResult(value: Record<string, unknown>, extra: ContentBlock[] = []): Record<string, unknown> {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }, ...extra], structuredContent: value };
}

/**
 * What a view-linked tool's answer carries for its MCP Apps view (the tools' ToolViews): found at boot
 * by the transport, which hands it to {@link ToolContext.view}; without one, answers stay as they are.
 */
export abstract class ToolViewData {
  abstract reply(ctx: ToolContext, answer: object | ToolReply, projectId: string | undefined): Promise<object | ToolReply>;
}

/** A tool provider: a thin adapter from arguments to a domain service. */
export interface McpToolHandler<Args = any> {
  run(args: Args, ctx: ToolContext): Promise<object | ToolReply>;
}

/** The schema as the catalogue compiles it: closed unless it says otherwise. */
type Closed<Input> = Input extends { additionalProperties: boolean } ? Input : Input & { readonly additionalProperties: false };

/**
 * The arguments run() receives, derived from the tool's input schema (declared `as const`): what the
 * validator lets through, its defaults applied (so a property with a default is always present).
 */
export type ToolArgs<Input extends ObjectSchema & JSONSchema> = FromSchema<Closed<Input>>;

/** A tool provider class whose run() takes the arguments its input schema describes. */
type ToolClass<Input extends ObjectSchema & JSONSchema> = abstract new (...deps: any[]) => {
  // A property, not a method: its arguments are checked strictly (contravariantly), not bivariantly.
  run: (args: ToolArgs<Input>, ctx: ToolContext) => Promise<object | ToolReply>;
};

/** A definition, then the class it decorates: its run() must take the arguments the definition's input describes. */
interface ToolDecorator {
  <const Input extends ObjectSchema & JSONSchema>(definition: ToolDefinition<Input>): (target: ToolClass<Input>) => void;
}

/**
 * Marks a provider as an MCP tool; the catalogue discovers it at boot (by `McpTool.KEY`). The compiler
 * checks that the class's run() takes the {@link ToolArgs} of `definition.input`: the schema is the only
 * declaration of a tool's arguments. (Discovery reads the metadata through the second signature, which
 * no definition matches: its input would be `never`.)
 */
export const McpTool = DiscoveryService.createDecorator<ToolDefinition>() as unknown as ToolDecorator & DiscoverableDecorator<ToolDefinition<never>>;
