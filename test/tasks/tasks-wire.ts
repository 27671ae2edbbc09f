import { eventually } from '../support/database.js';
import type { TestApp } from '../support/test-app.js';
import { ask, type Answer } from '../support/wire2026.js';

/** Raw MCP 2026-07-28 requests of the tasks extension (SEP-2663), as the conformance suite sends them. */
export const TASKS = 'io.modelcontextprotocol/tasks';
/** A client that declared the extension (and elicitation, to be asked). */
export const WITH_TASKS = { elicitation: {}, extensions: { [TASKS]: {} } };
export const WITHOUT_TASKS = { elicitation: {} };

/** One 2026-07-28 request (test/support/wire2026.ts) from a client declaring `caps` (the extension by default). */
export function modern(
  t: Pick<TestApp, 'http'>,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  caps: Record<string, unknown> = WITH_TASKS,
): Promise<Answer> {
  return ask(t, token, method, params, caps);
}

export function callTool(
  t: Pick<TestApp, 'http'>,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
  caps: Record<string, unknown> = WITH_TASKS,
): Promise<Answer> {
  return modern(t, token, 'tools/call', { name, arguments: args }, caps);
}

/** tools/call that must create a task: its taskId. */
export async function createTask(t: Pick<TestApp, 'http'>, token: string, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const res = await callTool(t, token, name, args);
  if (res.status !== 200 || res.result?.resultType !== 'task')
    throw new Error(`expected a CreateTaskResult, got ${res.status}: ${JSON.stringify(res.error ?? res.result)}`);
  return res.result.taskId;
}

/** tasks/get that must succeed: the task. */
export async function getTask(t: Pick<TestApp, 'http'>, token: string, taskId: string): Promise<any> {
  const res = await modern(t, token, 'tasks/get', { taskId });
  if (res.status !== 200 || !res.result) throw new Error(`tasks/get answered ${res.status}: ${JSON.stringify(res.error)}`);
  return res.result;
}

/** Polls tasks/get until `done(task)`; fails after `timeoutMs` with the last task seen. */
export function waitForTask(
  t: Pick<TestApp, 'http'>,
  token: string,
  taskId: string,
  done: (task: any) => boolean = (task) => ['completed', 'failed', 'cancelled'].includes(task.status),
  timeoutMs = 15_000,
): Promise<any> {
  return eventually(() => getTask(t, token, taskId), done, timeoutMs);
}
