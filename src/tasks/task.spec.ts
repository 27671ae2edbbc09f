import { RpcError } from '../protocol/json-rpc.js';
import type { InputRequest } from '../protocol/input.js';
import {
  applyAnswers,
  createTaskResult,
  declaresTasks,
  detailedTask,
  errorOf,
  inputResponsesParam,
  outcomeOf,
  taskIdParam,
  TASKS_EXTENSION,
  type TaskRow,
} from './task.js';

const row = (over: Partial<TaskRow> = {}): TaskRow => ({
  id: 'task-1',
  status: 'working',
  input_requests: null,
  result: null,
  error: null,
  created_at: new Date('2026-07-28T10:00:00.000Z'),
  last_updated_at: new Date('2026-07-28T10:00:01.000Z'),
  ...over,
});

const CONFIRM: InputRequest = {
  method: 'elicitation/create',
  params: { message: 'Sure?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
};

describe('task shapes', () => {
  it('CreateTaskResult is flat, with integer ttlMs and pollIntervalMs and no v1 keys', () => {
    expect(createTaskResult(row())).toEqual({
      resultType: 'task',
      taskId: 'task-1',
      status: 'working',
      createdAt: '2026-07-28T10:00:00.000Z',
      lastUpdatedAt: '2026-07-28T10:00:01.000Z',
      ttlMs: 3_600_000,
      pollIntervalMs: 1_000,
    });
  });

  it('tasks/get carries only what its status carries', () => {
    const result = { resultType: 'complete', content: [] };
    const error = { code: -32603, message: 'x' };
    expect(detailedTask(row({ status: 'completed', result, error }))).toMatchObject({ status: 'completed', result });
    expect(detailedTask(row({ status: 'completed', result }))).not.toHaveProperty('error');
    expect(detailedTask(row({ status: 'failed', error, result }))).not.toHaveProperty('result');
    expect(detailedTask(row({ status: 'input_required', input_requests: { c: CONFIRM } })).inputRequests).toEqual({ c: CONFIRM });
    const cancelled = detailedTask(row({ status: 'cancelled', result, error, input_requests: { c: CONFIRM } }));
    for (const key of ['result', 'error', 'inputRequests', 'resultType']) expect(cancelled).not.toHaveProperty(key);
  });

  it('the extension is declared only as an object under extensions', () => {
    expect(declaresTasks({ extensions: { [TASKS_EXTENSION]: {} } })).toBe(true);
    expect(declaresTasks({ extensions: { [TASKS_EXTENSION]: true } })).toBe(false);
    expect(declaresTasks({ extensions: {} })).toBe(false);
    expect(declaresTasks({ tasks: {} })).toBe(false);
  });

  it('params: a non-empty string taskId, an object of inputResponses', () => {
    expect(taskIdParam('tasks/get', { taskId: 'a' })).toBe('a');
    for (const params of [{}, { taskId: 1 }, { taskId: '' }, null, []]) expect(() => taskIdParam('tasks/get', params)).toThrow(RpcError);
    expect(inputResponsesParam({ inputResponses: {} })).toEqual({});
    for (const params of [{}, { inputResponses: null }, { inputResponses: [] }, { inputResponses: 'x' }])
      expect(() => inputResponsesParam(params)).toThrow(/inputResponses/);
  });

  it('answers: valid ones to asked keys count, the rest stay pending', () => {
    const pending = { a: CONFIRM, b: CONFIRM };
    const out = applyAnswers(pending, { earlier: 1 }, { a: { action: 'accept', content: { ok: true } }, b: { action: 'maybe' }, c: { action: 'accept' } });
    expect(out.answers).toEqual({ earlier: 1, a: { action: 'accept', content: { ok: true } } });
    expect(out.remaining).toEqual({ b: CONFIRM });
    expect(applyAnswers(pending, {}, { a: { action: 'decline' }, b: { action: 'cancel' } }).remaining).toEqual({});
  });

  it('outcomes: input_required keeps its questions only; a result drops MRTR fields; errors are JSON-RPC shaped without internals', () => {
    expect(outcomeOf({ resultType: 'input_required', inputRequests: { a: CONFIRM }, requestState: 's' })).toEqual({
      status: 'input_required',
      inputRequests: { a: CONFIRM },
    });
    expect(outcomeOf({ content: [], isError: true })).toEqual({ status: 'completed', result: { content: [], isError: true, resultType: 'complete' } });
    expect(outcomeOf('{"content":[]}')).toEqual({ status: 'completed', result: { content: [], resultType: 'complete' } });
    expect(errorOf(new RpcError(-32602, 'bad', 200, { uri: 'x' }))).toEqual({ code: -32602, message: 'bad', data: { uri: 'x' } });
    expect(errorOf(new Error('secret detail'))).toEqual({ code: -32603, message: expect.not.stringContaining('secret') });
  });
});
