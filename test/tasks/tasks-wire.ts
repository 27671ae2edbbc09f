import { rpc } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/** Raw MCP 2026-07-28 requests of the tasks extension (SEP-2663), as the conformance suite sends them. */
export const MODERN = '2026-07-28';
export const TASKS = 'io.modelcontextprotocol/tasks';
/** A client that declared the extension (and elicitation, to be asked). */
export const WITH_TASKS = { elicitation: {}, extensions: { [TASKS]: {} } };
export const WITHOUT_TASKS = { elicitation: {} };

const NAME_PARAM: Record<string, string> = { 'tools/call': 'name', 'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId' };
let nextId = 1;

export interface Answer {
  status: number;
  result: any;
  error: any;
}

/** One 2026-07-28 request with its headers (Mcp-Name from the target when a string) and `_meta`. */
export async function modern(t: Pick<TestApp, 'http'>, token: string, method: string, params: Record<string, unknown> = {}, caps: Record<string, unknown> = WITH_TASKS): Promise<Answer> {
  const id = nextId++;
  const target = params[NAME_PARAM[method] ?? ''];
  const body = {
    jsonrpc: '2.0',
    id,
    method,
    params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': caps } },
  };
  const res = await rpc(t, token, body, { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...(typeof target === 'string' ? { 'Mcp-Name': target } : {}) });
  const parsed = JSON.parse(res.text);
  if (parsed.id !== id) throw new Error(`answer id ${JSON.stringify(parsed.id)} for request ${id}: ${res.text}`);
  return { status: res.status, result: parsed.result, error: parsed.error };
}

export function callTool(t: Pick<TestApp, 'http'>, token: string, name: string, args: Record<string, unknown> = {}, caps: Record<string, unknown> = WITH_TASKS): Promise<Answer> {
  return modern(t, token, 'tools/call', { name, arguments: args }, caps);
}

/** tools/call that must create a task: its taskId. */
export async function createTask(t: Pick<TestApp, 'http'>, token: string, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const res = await callTool(t, token, name, args);
  if (res.status !== 200 || res.result?.resultType !== 'task') throw new Error(`expected a CreateTaskResult, got ${res.status}: ${JSON.stringify(res.error ?? res.result)}`);
  return res.result.taskId;
}

/** tasks/get that must succeed: the task. */
export async function getTask(t: Pick<TestApp, 'http'>, token: string, taskId: string): Promise<any> {
  const res = await modern(t, token, 'tasks/get', { taskId });
  if (res.status !== 200 || !res.result) throw new Error(`tasks/get answered ${res.status}: ${JSON.stringify(res.error)}`);
  return res.result;
}

/** Polls tasks/get until `done(task)`; fails after `timeoutMs` with the last task seen. */
export async function waitForTask(t: Pick<TestApp, 'http'>, token: string, taskId: string, done: (task: any) => boolean = (task) => ['completed', 'failed', 'cancelled'].includes(task.status), timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(t, token, taskId);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${JSON.stringify(task)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
