import { ConformanceFixturesModule } from '../conformance/conformance-fixtures.module.js';
import { confirmDeleteAnswered, slowComputeEnded, slowComputeTicks } from '../conformance/tasks-fixtures.js';
import { createDatabase, eventually, type TestDatabase } from '../support/database.js';
import { createTenant, ISO, newKey, withRole, type Tenant } from '../support/fixtures.js';
import { initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';
import { callTool, createTask, getTask, modern, TASKS, waitForTask, WITHOUT_TASKS } from './tasks-wire.js';

/**
 * The MCP tasks extension (SEP-2663) in the 2026-07-28 era over raw HTTP: a task-supporting tools/call
 * becomes a task when the request declares the extension; tasks/get, /update and /cancel; the gate,
 * ownership, param errors, input_required through tasks/update; and the legacy era left as it was.
 */

describe('tasks extension (2026-07-28)', () => {
  let db: TestDatabase;
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app({}, [ConformanceFixturesModule]);
    tenant = await createTenant(t);
  });
  afterAll(() => db?.drop());

  it('discover advertises the extension under capabilities.extensions', async () => {
    const res = await modern(t, tenant.key, 'server/discover');
    expect(res.result.capabilities.extensions).toEqual({ [TASKS]: {} });
    expect(res.result.capabilities.tasks).toBeUndefined();
  });

  it('a task-supporting call answers a flat CreateTaskResult at once, is working, then completed with its result inline', async () => {
    const res = await callTool(t, tenant.key, 'slow_compute', { seconds: 1, label: 'create' });
    expect(res.status).toBe(200);
    const created = res.result;
    expect(created).toMatchObject({
      resultType: 'task',
      taskId: expect.any(String),
      status: 'working',
      createdAt: expect.stringMatching(ISO),
      lastUpdatedAt: expect.stringMatching(ISO),
      ttlMs: 3_600_000,
      pollIntervalMs: 1_000,
    });
    for (const key of ['task', 'ttl', 'pollInterval', 'requestState', 'inputRequests', 'content']) expect(created).not.toHaveProperty(key);
    expect(created.taskId.length).toBeGreaterThanOrEqual(24);

    // Durable before the answer: an immediate tasks/get finds it, still working, without a result.
    const working = await getTask(t, tenant.key, created.taskId);
    expect(working).toMatchObject({ resultType: 'complete', taskId: created.taskId, status: 'working' });
    expect(working).not.toHaveProperty('result');
    expect(working).not.toHaveProperty('error');

    const done = await waitForTask(t, tenant.key, created.taskId);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ resultType: 'complete', content: [{ type: 'text', text: 'Computed for 1s (create).' }] });
    expect(done).not.toHaveProperty('requestState');
    expect(Date.parse(done.lastUpdatedAt)).toBeGreaterThan(Date.parse(done.createdAt));
  });

  it('a tool error is a completed task with result.isError; an internal error is a failed task with a JSON-RPC error', async () => {
    const failing = await waitForTask(t, tenant.key, await createTask(t, tenant.key, 'failing_job'));
    expect(failing.status).toBe('completed');
    expect(failing.result.isError).toBe(true);
    expect(failing.result.content[0].text).toMatch(/failed on purpose/);

    const crashed = await waitForTask(t, tenant.key, await createTask(t, tenant.key, 'protocol_error_job'));
    expect(crashed.status).toBe('failed');
    expect(crashed.error).toEqual({ code: -32603, message: expect.stringMatching(/^Internal error while running protocol_error_job/) });
    expect(crashed).not.toHaveProperty('result');
    // No internals leak.
    expect(JSON.stringify(crashed.error)).not.toMatch(/crashed on purpose/);
  });

  it('tasks/cancel acks empty, the task ends cancelled and its work stops; cancelling again, or a finished task, is the same ack', async () => {
    const taskId = await createTask(t, tenant.key, 'slow_compute', { seconds: 60, label: 'cancel-1' });
    await eventually(
      async () => slowComputeTicks.get('cancel-1') ?? 0,
      (ticks) => ticks > 0,
      15_000,
      20,
    );
    const ack = await modern(t, tenant.key, 'tasks/cancel', { taskId });
    expect(ack.status).toBe(200);
    expect(Object.keys(ack.result).sort()).toEqual(['_meta', 'resultType']);
    expect(ack.result.resultType).toBe('complete');
    expect((await getTask(t, tenant.key, taskId)).status).toBe('cancelled');
    // The run ends on its aborted signal, long before its 60 s (600 ticks): its work stopped.
    expect(
      await eventually(
        async () => slowComputeEnded.get('cancel-1'),
        (ended) => ended !== undefined,
        15_000,
        20,
      ),
    ).toBe('stopped');
    expect(slowComputeTicks.get('cancel-1')).toBeLessThan(600);
    expect((await getTask(t, tenant.key, taskId)).status).toBe('cancelled');

    const again = await modern(t, tenant.key, 'tasks/cancel', { taskId });
    expect(again.result.resultType).toBe('complete');

    const finished = await createTask(t, tenant.key, 'slow_compute', { seconds: 0 });
    await waitForTask(t, tenant.key, finished);
    expect((await modern(t, tenant.key, 'tasks/cancel', { taskId: finished })).result.resultType).toBe('complete');
    expect((await getTask(t, tenant.key, finished)).status).toBe('completed');
  });

  it('input_required: the question shows on tasks/get, tasks/update answers it (partly, then fully) and the call resumes', async () => {
    const taskId = await createTask(t, tenant.key, 'confirm_delete', { filename: 'a.txt' });
    const waiting = await waitForTask(t, tenant.key, taskId, (task) => task.status !== 'working');
    expect(waiting.status).toBe('input_required');
    expect(waiting.inputRequests).toEqual({
      confirm: {
        method: 'elicitation/create',
        params: { message: 'Delete a.txt?', requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] } },
      },
    });
    expect(waiting).not.toHaveProperty('requestState');

    // Unknown keys and invalid answers change nothing.
    const ignored = await modern(t, tenant.key, 'tasks/update', { taskId, inputResponses: { other: { action: 'accept' }, confirm: { action: 'maybe' } } });
    expect(ignored.result.resultType).toBe('complete');
    expect((await getTask(t, tenant.key, taskId)).status).toBe('input_required');

    const ack = await modern(t, tenant.key, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    expect(Object.keys(ack.result).sort()).toEqual(['_meta', 'resultType']);
    const done = await waitForTask(t, tenant.key, taskId);
    expect(done.result.content[0].text).toBe('Deleted a.txt.');

    const multi = await createTask(t, tenant.key, 'multi_input');
    const both = await waitForTask(t, tenant.key, multi, (task) => task.status !== 'working');
    expect(Object.keys(both.inputRequests).sort()).toEqual(['confirm', 'name']);
    await modern(t, tenant.key, 'tasks/update', { taskId: multi, inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } });
    const one = await getTask(t, tenant.key, multi);
    expect(one.status).toBe('input_required');
    expect(Object.keys(one.inputRequests)).toEqual(['confirm']);
    await modern(t, tenant.key, 'tasks/update', { taskId: multi, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } });
    expect((await waitForTask(t, tenant.key, multi)).result.content[0].text).toBe('Name Ada, confirmed true.');
  });

  it('the same answers sent five times at once resume the call once', async () => {
    const filename = `race-${Date.now()}.txt`;
    const taskId = await createTask(t, tenant.key, 'confirm_delete', { filename });
    expect((await waitForTask(t, tenant.key, taskId, (task) => task.status !== 'working')).status).toBe('input_required');
    const answer = { confirm: { action: 'accept', content: { confirm: true } } };
    const acks = await Promise.all(Array.from({ length: 5 }, () => modern(t, tenant.key, 'tasks/update', { taskId, inputResponses: answer })));
    for (const ack of acks) expect(ack.result.resultType).toBe('complete');
    // Each tasks/update that resumes the call starts its run before it acks, and all five acks are in.
    expect((await waitForTask(t, tenant.key, taskId)).result.content[0].text).toBe(`Deleted ${filename}.`);
    expect(confirmDeleteAnswered.get(filename)).toBe(1);
  });

  it('input_required rounds in the request, then a task: the answer gathered before reaches the task', async () => {
    const r1 = await callTool(t, tenant.key, 'test_tool_with_task');
    expect(r1.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create' } },
      requestState: expect.any(String),
    });
    expect(r1.result).not.toHaveProperty('taskId');
    const r2 = await modern(t, tenant.key, 'tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
      requestState: r1.result.requestState,
    });
    expect(r2.result).toMatchObject({ resultType: 'task', status: 'working' });
    for (const key of ['requestState', 'inputRequests']) expect(r2.result).not.toHaveProperty(key);
    const done = await waitForTask(t, tenant.key, r2.result.taskId);
    expect(done.result.content[0].text).toBe('Hello, Alice, from a task!');
    // Without the extension it cannot start (it requires a task).
    expect((await callTool(t, tenant.key, 'test_tool_with_task', {}, WITHOUT_TASKS)).error.code).toBe(-32021);
  });

  it('without the extension: tasks/* are -32021, an optional tool runs synchronously, a required one is -32021', async () => {
    const taskId = await createTask(t, tenant.key, 'slow_compute', { seconds: 0 });
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/update', { taskId, inputResponses: {} }],
      ['tasks/cancel', { taskId }],
    ] as const) {
      const res = await modern(t, tenant.key, method, params, WITHOUT_TASKS);
      expect(res.status).toBe(400);
      expect(res.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
      expect(res.error.message).toContain(TASKS);
    }
    const sync = await callTool(t, tenant.key, 'slow_compute', { seconds: 0 }, WITHOUT_TASKS);
    expect(sync.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Computed for 0s.' }] });
    expect(sync.result).not.toHaveProperty('taskId');

    const required = await callTool(t, tenant.key, 'failing_job', {}, WITHOUT_TASKS);
    expect(required.status).toBe(400);
    expect(required.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    // A sync-only tool never becomes a task, even with the extension and a legacy `task` hint.
    const greet = await modern(t, tenant.key, 'tools/call', { name: 'greet', arguments: { name: 'Ada' }, task: { ttl: 1000 } });
    expect(greet.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });

  it("another credential's or another tenant's taskId is as unknown as a made-up one (-32602)", async () => {
    const taskId = await createTask(t, tenant.key, 'slow_compute', { seconds: 0 });
    const unknown = await modern(t, tenant.key, 'tasks/get', { taskId: 'no-such-task' });
    expect(unknown.status).toBe(200);
    expect(unknown.error).toEqual({ code: -32602, message: 'Unknown taskId "no-such-task": no such task for this credential (or it expired).' });

    const sameAccount = await newKey(t, tenant.accountId, withRole(tenant.projectIds, 'owner'));
    const other = await createTenant(t);
    for (const key of [sameAccount.key, other.key]) {
      for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
        const res = await modern(t, key, method, { taskId, inputResponses: {} });
        expect(res.error).toEqual({ code: -32602, message: `Unknown taskId "${taskId}": no such task for this credential (or it expired).` });
      }
    }
    expect((await getTask(t, tenant.key, taskId)).status).toBe('completed');
  });

  it('bad params are -32602 with a message saying what is expected; tasks/result and tasks/list are 404 -32601', async () => {
    const missing = await modern(t, tenant.key, 'tasks/get', {});
    expect(missing.error).toEqual({ code: -32602, message: 'Invalid params: tasks/get takes {"taskId": string}, the taskId that tools/call answered.' });
    const number = await modern(t, tenant.key, 'tasks/cancel', { taskId: 42 });
    expect(number.error.code).toBe(-32602);
    expect(number.error.message).toMatch(/tasks\/cancel takes \{"taskId": string\}/);
    const noResponses = await modern(t, tenant.key, 'tasks/update', { taskId: 'x' });
    expect(noResponses.error.code).toBe(-32602);
    expect(noResponses.error.message).toMatch(/"inputResponses"/);
    const nullResponses = await modern(t, tenant.key, 'tasks/update', { taskId: 'x', inputResponses: null });
    expect(nullResponses.error.code).toBe(-32602);
    // Mcp-Name must carry the taskId.
    const res = await rpc(
      t,
      tenant.key,
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tasks/get',
        params: {
          taskId: 'abc',
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } },
        },
      },
      { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tasks/get', 'Mcp-Name': 'xyz' },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32020);

    for (const method of ['tasks/result', 'tasks/list']) {
      const removed = await modern(t, tenant.key, method, { taskId: 'x' });
      expect(removed.status).toBe(404);
      expect(removed.error.code).toBe(-32601);
    }
  });

  it('the legacy era has no tasks: tasks/* are -32601 and task-supporting tools run as before', async () => {
    const { sessionId } = await initSession(t, tenant.key, '2025-11-25');
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 3, method, params: { taskId: 'x' } }, sessionHeaders(sessionId, '2025-11-25'));
      expect(res.status).toBe(200);
      expect(res.body.error.code).toBe(-32601);
    }
    const res = await rpc(
      t,
      tenant.key,
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 1000 } } },
      sessionHeaders(sessionId, '2025-11-25'),
    );
    expect(res.body.result.content).toEqual([{ type: 'text', text: 'Computed for 0s.' }]);
    expect(res.body.result).not.toHaveProperty('resultType');
  });
});
