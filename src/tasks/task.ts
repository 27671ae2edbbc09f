import { RpcError } from '../protocol/json-rpc.js';
import { validAnswer, type InputRequest } from '../protocol/input.js';

/**
 * The MCP tasks extension (SEP-2663) as the 2026-07-28 wire shows it: one place for each shape (the
 * flat CreateTaskResult, the task tasks/get details) and for reading the tasks/* params. Pure.
 */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

/** How long a task can be read after its creation (the `ttlMs` it announces). */
export const TASK_TTL_MS = 3_600_000;
/** How often a client should poll tasks/get. */
export const POLL_INTERVAL_MS = 1_000;

/** A JSON-RPC error as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

/** A task as the repository reads it. */
export interface TaskRow {
  id: string;
  status: TaskStatus;
  input_requests: Record<string, InputRequest> | null;
  result: Record<string, unknown> | null;
  error: TaskError | null;
  created_at: Date;
  last_updated_at: Date;
}

/** Whether this request declared the tasks extension in its own `_meta` client capabilities. */
export function declaresTasks(capabilities: Record<string, unknown>): boolean {
  const extensions = capabilities.extensions;
  if (extensions === null || typeof extensions !== 'object' || Array.isArray(extensions)) return false;
  const value = (extensions as Record<string, unknown>)[TASKS_EXTENSION];
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** -32021: the request needs the tasks extension declared. */
export function tasksCapabilityMissing(what: string): RpcError {
  return RpcError.missingCapability(
    { extensions: { [TASKS_EXTENSION]: {} } },
    `Missing client capability: ${what} needs the tasks extension; declare "extensions": {"${TASKS_EXTENSION}": {}} in params._meta["io.modelcontextprotocol/clientCapabilities"].`,
  );
}

/** The fields every task shape has (SEP-2663 `Task`). */
function envelope(row: TaskRow) {
  return {
    taskId: row.id,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    lastUpdatedAt: row.last_updated_at.toISOString(),
    ttlMs: TASK_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** tools/call's answer when it became a task: flat, `resultType: "task"`. */
export function createTaskResult(row: TaskRow): Record<string, unknown> {
  return { resultType: 'task', ...envelope(row) };
}

/** tasks/get's answer: the task, with what its status carries (inputRequests, result or error). */
export function detailedTask(row: TaskRow): Record<string, unknown> {
  const out: Record<string, unknown> = envelope(row);
  if (row.status === 'input_required' && row.input_requests) out.inputRequests = row.input_requests;
  if (row.status === 'completed' && row.result) out.result = row.result;
  if (row.status === 'failed' && row.error) out.error = row.error;
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The `taskId` of tasks/get, /update and /cancel; -32602 when missing or not a string. */
export function taskIdParam(method: string, params: unknown): string {
  const taskId = isObject(params) ? params.taskId : undefined;
  if (typeof taskId !== 'string' || taskId === '')
    throw RpcError.invalidParams(`Invalid params: ${method} takes {"taskId": string}, the taskId that tools/call answered.`);
  return taskId;
}

/** The `inputResponses` of tasks/update; -32602 when missing or not an object. */
export function inputResponsesParam(params: unknown): Record<string, unknown> {
  const responses = isObject(params) ? params.inputResponses : undefined;
  if (!isObject(responses))
    throw RpcError.invalidParams(
      'Invalid params: tasks/update takes {"taskId": string, "inputResponses": {<key>: answer}} with answers by the keys of the task\'s inputRequests.',
    );
  return responses;
}

/**
 * The answers a tasks/update adds to a task waiting for input: the valid answers to keys it asked for
 * (others, and invalid answers, are ignored) and the requests still unanswered.
 */
export function applyAnswers(
  pending: Record<string, InputRequest>,
  known: Record<string, unknown>,
  responses: Record<string, unknown>,
): { answers: Record<string, unknown>; remaining: Record<string, InputRequest> } {
  const answers = { ...known };
  const remaining: Record<string, InputRequest> = {};
  for (const [key, request] of Object.entries(pending)) {
    const answer = Object.hasOwn(responses, key) ? validAnswer(request, responses[key]) : undefined;
    if (answer === undefined) remaining[key] = request;
    else answers[key] = responses[key];
  }
  return { answers, remaining };
}

/** What a run of the task's tool call ended with, as the task records it. */
export type RunOutcome =
  | { status: 'completed'; result: Record<string, unknown> }
  | { status: 'input_required'; inputRequests: Record<string, InputRequest> }
  | { status: 'failed'; error: TaskError };

/**
 * The outcome of a tool call's result: `input_required` (its questions, no requestState: a task's
 * answers are kept with the task) or `completed` (a tool error is a completed task with `isError`).
 */
export function outcomeOf(result: unknown): RunOutcome {
  const value: Record<string, unknown> = typeof result === 'string' ? (JSON.parse(result) as Record<string, unknown>) : isObject(result) ? result : {};
  if (value.resultType === 'input_required' && isObject(value.inputRequests))
    return { status: 'input_required', inputRequests: value.inputRequests as Record<string, InputRequest> };
  // The inlined result is a 2026-07-28 CallToolResult, without the MRTR fields.
  const { requestState: _state, inputRequests: _requests, ...rest } = value;
  return { status: 'completed', result: { ...rest, resultType: 'complete' } };
}

/** A thrown error as a failed task's `error` (JSON-RPC shaped; no internals). */
export function errorOf(err: unknown): TaskError {
  if (err instanceof RpcError) return { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) };
  return { code: -32603, message: 'Internal error while running the task; it is logged.' };
}
