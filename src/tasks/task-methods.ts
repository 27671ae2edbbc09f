import { Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal.js';
import type { RequestClient } from '../mcp/mcp-request.js';
import { CallStream } from '../protocol/call-stream.js';
import { McpMethod, ToolCalls, ToolTasks, type MethodCall } from '../protocol/mcp-method.js';
import type { MethodResult } from '../protocol/method-result.js';
import { RequestCancellation } from '../protocol/request-cancellation.js';
import { declaresTasks, inputResponsesParam, taskIdParam, tasksCapabilityMissing, TASKS_EXTENSION } from './task.js';
import { TasksService, taskRequestKey, type TaskRunner } from './tasks.service.js';

/**
 * The tasks extension on /mcp (2026-07-28 era): `tasks/get`, `/update` and `/cancel`, and, as the
 * {@link ToolTasks} the transport's `tools/call` finds at boot, the start of a tool call as a task.
 */
@Injectable()
export class TaskMethods extends ToolTasks {
  constructor(
    private readonly tasks: TasksService,
    private readonly tools: ToolCalls,
    private readonly cancellation: RequestCancellation,
  ) {
    super();
  }

  declared(client: RequestClient): boolean {
    return declaresTasks(client.capabilities);
  }

  start({ principal, client, params }: MethodCall, tool: string): Promise<MethodResult> {
    const { _meta: _ignored, task: _hint, ...call } = params as Record<string, unknown>;
    return this.tasks.start(principal, tool, { params: call, capabilities: client.capabilities }, this.runner(principal, client));
  }

  @McpMethod('tasks/get', { eras: ['modern'], advertises: { extensions: { [TASKS_EXTENSION]: {} } } })
  async get(call: MethodCall): Promise<MethodResult> {
    return { result: await this.tasks.get(call.principal, this.taskId('tasks/get', call)) };
  }

  /** `tasks/update {taskId, inputResponses}`: answers to the task's questions; it resumes once all are in. */
  @McpMethod('tasks/update', { eras: ['modern'] })
  async update(call: MethodCall): Promise<MethodResult> {
    const taskId = this.taskId('tasks/update', call);
    await this.tasks.update(call.principal, taskId, inputResponsesParam(call.params), this.runner(call.principal, call.client));
    return { result: {} };
  }

  /** `tasks/cancel {taskId}`: the task ends cancelled, its run stops wherever it runs, and so do the jobs it started. */
  @McpMethod('tasks/cancel', { eras: ['modern'] })
  async cancel(call: MethodCall): Promise<MethodResult> {
    const taskId = this.taskId('tasks/cancel', call);
    if (await this.tasks.cancel(call.principal, taskId)) await this.cancellation.cancel(call.principal, taskRequestKey(taskId));
    return { result: {} };
  }

  /** The taskId of a tasks/* request that declared the extension (-32021 otherwise, -32602 without a taskId). */
  private taskId(method: string, { client, params }: MethodCall): string {
    if (!declaresTasks(client.capabilities)) throw tasksCapabilityMissing(method);
    return taskIdParam(method, params);
  }

  /** Runs a task's tool call as a stateless 2026-07-28 call of the client that created the task. */
  private runner(principal: Principal, client: RequestClient): TaskRunner {
    return ({ capabilities }, params, signal, requestKey) =>
      this.tools.call({
        principal,
        session: null,
        era: 'modern',
        client: { ...client, capabilities, logLevel: null },
        params,
        signal,
        stream: CallStream.detached(),
        requestKey,
      });
  }
}
