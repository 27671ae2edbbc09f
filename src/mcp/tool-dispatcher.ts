import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Outcome } from '../activity/activity-entry.entity.js';
import type { Principal, ReachableProject } from '../auth/principal.js';
import { DomainError } from '../common/domain-error.js';
import { guardArguments } from './argument-guard.js';
import { takesViews } from '../protocol/views.js';
import { InputRequired } from '../protocol/input.js';
import { InputRequests } from './input-requests.js';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import { ToolReply, ToolViewData, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import type { MethodResult } from '../protocol/method-result.js';
import { DetachToTask, type ToolCalls, type ToolCallInput } from '../protocol/mcp-method.js';
import { describeSchemaError } from './schema-errors.js';
import { permits, refusal, ToolAccess } from '../protocol/tool-access.js';
import type { CatalogueTool } from '../protocol/tool-registry.js';
import { toolError, toolResult } from './tool-result.js';

/** `tools/call`: find the tool, route the project, guard and validate the arguments, run, shape the result. */
@Injectable()
export class ToolDispatcher implements ToolCalls, OnModuleInit {
  private readonly log = new Logger(ToolDispatcher.name);
  /** What view-linked answers carry for MCP Apps views, when the app has the product's tools. */
  private viewData?: ToolViewData;

  constructor(
    private readonly access: ToolAccess,
    private readonly inputs: InputRequests,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    try {
      this.viewData = this.moduleRef.get(ToolViewData, { strict: false });
    } catch {
      this.viewData = undefined;
    }
  }

  async call({ principal, session, era, client, params, signal, stream, requestKey, detachable }: ToolCallInput): Promise<MethodResult> {
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      throw RpcError.invalidParams('Invalid params: expected an object with "name" and "arguments".');
    const { name, arguments: rawArgs } = params as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string') throw RpcError.invalidParams('Invalid params: "name" must be the name of a tool (a string).');
    const tool = this.access.find(principal, name);
    if (!tool) throw RpcError.invalidParams(`Unknown tool: ${name}`);
    const { definition } = tool;

    const args = guardArguments(rawArgs, definition.input, definition.richBody);
    const project = this.route(principal, tool, args);
    // The handler gets the resolved project, never the caller's project_id.
    delete args.project_id;
    const allowed = this.access.allowedProjects(principal, definition);
    const projectId = project?.id ?? null;
    const fail = (code: string, message: string, outcome: Outcome, details?: unknown): MethodResult => ({
      result: toolError(code, message, details),
      outcome,
      projectId,
    });

    if (project && !permits(project, definition)) return fail('forbidden', refusal(project, definition, allowed), 'denied');
    if (!tool.validate(args)) return fail('invalid_arguments', describeSchemaError(tool.validate.errors?.[0]), 'invalid');

    // 2026-07-28: a retry's inputResponses and requestState are checked before the tool runs (-32602).
    const asker = this.inputs.forCall({ principal, era, client, session, stream, signal, requestKey, method: 'tools/call', name, args: rawArgs, params });
    try {
      const ctx: ToolContext = {
        principal,
        project: project as ReachableProject,
        allowedProjects: allowed,
        signal,
        era,
        client,
        requestKey,
        progress: (fraction, message) => stream.progress(fraction, message, name),
        keptAlive: stream.keptAlive,
        log: (level, data) => stream.log(level, data, name),
        canAsk: asker.canAsk,
        ask: asker.ask,
        detach: async () => {
          if (detachable) throw new DetachToTask();
        },
        views: takesViews(client.capabilities),
        view: (answer, projectId) => (ctx.views && this.viewData ? this.viewData.reply(ctx, answer, projectId) : Promise.resolve(answer)),
        mayRun: (other, projectId) => {
          const found = this.access.find(principal, other);
          const where = projectId === undefined ? project : principal.projects.get(projectId);
          return found !== undefined && where !== undefined && permits(where, found.definition);
        },
      };
      const reply = await tool.handler.run(args, ctx);
      // The tool says how its call is recorded (one that asks for setup instead of working, say).
      return { result: toolResult(reply), outcome: reply instanceof ToolReply ? reply.outcome : 'ok', projectId };
    } catch (err) {
      // 2026-07-28: the tool needs the client's answers first; it runs again from the start on the retry.
      if (err instanceof InputRequired) return { result: err.result, outcome: err.outcome, projectId };
      if (err instanceof DetachToTask) throw err;
      if (err instanceof DomainError) return fail(err.code, err.message, err.code === 'forbidden' ? 'denied' : 'tool_error', err.details);
      if (err instanceof RpcError) throw err;
      // A call stopped on purpose (cancelled task, client gone) is not a failure worth logging.
      if (!signal.aborted) this.log.error(`Tool ${name} failed: ${(err as Error).stack ?? String(err)}`);
      throw new RpcError(RpcCode.InternalError, `Internal error while running ${name}; it is logged. Try again, or report it if it persists.`);
    }
  }

  /** Project routing: infer one, require one of several, refuse ids outside the credential. */
  private route(principal: Principal, tool: CatalogueTool, args: Record<string, unknown>): ReachableProject | undefined {
    const given = args.project_id;
    let project: ReachableProject | undefined;
    if (given !== undefined) {
      project = typeof given === 'string' ? principal.projects.get(given) : undefined;
      if (!project) throw RpcError.invalidParams(`Unknown project "${typeof given === 'string' ? given : JSON.stringify(given)}" for this credential.`);
    }
    if (!tool.definition.projectScoped) return undefined;
    if (project) return project;
    if (principal.projects.size === 1) return principal.projects.values().next().value;
    throw RpcError.invalidParams(`project_id is required: this credential reaches ${principal.projects.size} projects; call list_projects`);
  }
}
