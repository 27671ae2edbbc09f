import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { DatabaseNotifications } from '../database/notifications.service.js';
import { RpcError } from '../protocol/json-rpc.js';
import type { MethodResult } from '../protocol/method-result.js';
import { applyAnswers, createTaskResult, detailedTask, errorOf, outcomeOf, TASK_TTL_MS, type RunOutcome, type TaskError } from './task.js';
import { TasksRepository, type TaskCall } from './tasks.repository.js';

/**
 * Runs the task's tool call once with these params (the call's, plus `inputResponses` with the
 * answers so far), stopping when `signal` aborts; `requestKey` names the run for cancelling its jobs.
 */
export type TaskRunner = (call: TaskCall, params: Record<string, unknown>, signal: AbortSignal, requestKey: string) => Promise<MethodResult>;

/** Carries the id of a task just cancelled, so that the instance running it stops it. */
const CANCEL_CHANNEL = 'reblog_task_cancel';

const INSTANCE_STOPPED: TaskError = { code: -32603, message: 'The server instance running this task stopped before it finished; call the tool again.' };

/** The request key a task's run goes by (RequestCancellation stops the jobs it started). */
export function taskRequestKey(taskId: string): string {
  return `task:${taskId}`;
}

/**
 * Tasks (MCP tasks extension): a tools/call detached from its request. The task is stored before
 * tools/call answers, its call runs on this instance in the background (renewing a lease), and its
 * outcome is stored for tasks/get on any instance. tasks/cancel marks it cancelled and aborts the run
 * wherever it is (LISTEN/NOTIFY); tasks/update adds answers and runs the call again once all are in.
 */
@Injectable()
export class TasksService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly log = new Logger(TasksService.name);
  /** Names this process in a task's lease. */
  private readonly instance = randomBytes(9).toString('base64url');
  /** The runs on this instance, by task id. */
  private readonly running = new Map<string, AbortController>();
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly tasks: TasksRepository,
    private readonly notifications: DatabaseNotifications,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.notifications.subscribe(CANCEL_CHANNEL, (taskId) => this.running.get(taskId)?.abort(new Error('task cancelled')));
    this.heartbeat = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.config.taskLeaseMs / 3)));
    this.heartbeat.unref();
  }

  /** Stopping: this instance's runs end, and their tasks are failed now rather than when the lease runs out. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    const ids = [...this.running.keys()];
    for (const controller of this.running.values()) controller.abort(new Error('instance stopping'));
    if (ids.length)
      await this.tasks
        .failInstance(ids, this.instance, INSTANCE_STOPPED)
        .catch((err: Error) => this.log.warn(`Failing this instance's tasks failed: ${err.message}`));
  }

  /** Creates the task (durable before the answer) and starts its call; answers the flat CreateTaskResult. */
  async start(principal: Principal, tool: string, call: Omit<TaskCall, 'answers'>, runner: TaskRunner): Promise<MethodResult> {
    await this.tasks.purge().catch((err: Error) => this.log.warn(`Purging expired tasks failed: ${err.message}`));
    const id = randomBytes(18).toString('base64url');
    const row = await this.tasks.insert({
      id,
      accountId: principal.accountId,
      credentialId: principal.credential.id,
      tool,
      params: call.params,
      capabilities: call.capabilities,
      ttlMs: TASK_TTL_MS,
      instance: this.instance,
    });
    this.launch(id, { ...call, answers: {} }, runner);
    return { result: createTaskResult(row) };
  }

  /** tasks/get: the task of this credential, with its outcome; a working task whose instance stopped is failed first. */
  async get(principal: Principal, taskId: string): Promise<Record<string, unknown>> {
    const found = await this.find(principal, taskId);
    if (found.status === 'working' && !this.running.has(taskId)) {
      await this.tasks.failStale(taskId, principal.credential.id, this.config.taskLeaseMs, INSTANCE_STOPPED);
      return detailedTask(await this.find(principal, taskId));
    }
    return detailedTask(found);
  }

  /**
   * tasks/update: records the valid answers to the questions the task waits on (others are ignored);
   * once every question is answered the call runs again, on this instance. Anything else is a no-op.
   */
  async update(principal: Principal, taskId: string, responses: Record<string, unknown>, runner: TaskRunner): Promise<void> {
    const task = await this.find(principal, taskId);
    if (task.status !== 'input_required' || !task.input_requests) return;
    const { answers, remaining } = applyAnswers(task.input_requests, task.answers, responses);
    const resume = Object.keys(remaining).length === 0;
    const recorded = await this.tasks.answer(taskId, principal.credential.id, task.input_requests, answers, remaining, resume, this.instance);
    if (recorded && resume) this.launch(taskId, { ...task, answers }, runner);
  }

  /** tasks/cancel: whether the task was cancelled now (false: it had ended already). Unknown: -32602. */
  async cancel(principal: Principal, taskId: string): Promise<boolean> {
    const cancelled = await this.tasks.cancel(taskId, principal.credential.id);
    if (!cancelled) {
      await this.find(principal, taskId);
      return false;
    }
    this.running.get(taskId)?.abort(new Error('task cancelled'));
    await this.notifications.notify(CANCEL_CHANNEL, taskId);
    return true;
  }

  private async find(principal: Principal, taskId: string) {
    const task = await this.tasks.find(taskId, principal.credential.id);
    // Another credential's task, or an expired one, is as unknown as a made-up id.
    if (!task) throw RpcError.invalidParams(`Unknown taskId "${taskId}": no such task for this credential (or it expired).`);
    return task;
  }

  /** Runs the call in the background and stores its outcome (unless the task was cancelled meanwhile). */
  private launch(taskId: string, call: TaskCall, runner: TaskRunner): void {
    const controller = new AbortController();
    this.running.set(taskId, controller);
    const params = Object.keys(call.answers).length ? { ...call.params, inputResponses: call.answers } : call.params;
    void (async () => {
      let outcome: RunOutcome;
      try {
        outcome = outcomeOf((await runner(call, params, controller.signal, taskRequestKey(taskId))).result);
      } catch (err) {
        if (!(err instanceof RpcError)) this.log.error(`Task ${taskId} failed: ${(err as Error).stack ?? String(err)}`);
        outcome = { status: 'failed', error: errorOf(err) };
      } finally {
        this.running.delete(taskId);
      }
      // Cancelled (or this instance stopping): the row says so already.
      if (controller.signal.aborted) return;
      await this.tasks.settle(taskId, outcome).catch((err: Error) => this.log.error(`Storing the outcome of task ${taskId} failed: ${err.message}`));
    })();
  }

  private async renew(): Promise<void> {
    if (this.running.size === 0) return;
    await this.tasks.renew([...this.running.keys()], this.instance).catch((err: Error) => this.log.warn(`Renewing task leases failed: ${err.message}`));
  }
}
