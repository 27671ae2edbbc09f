import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { createDatabase, type TestDatabase } from '../support/database.js';
import { configuredTenant, createTenant } from '../support/fixtures.js';
import { connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { LogLevelsFixtureModule } from './log-levels.fixture.js';

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Splits an SSE body into the JSON of its `data:` lines, event by event. */
function sseMessages(body: string): any[] {
  return body
    .split(/\n\n/)
    .map((event) =>
      event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    )
    .filter(Boolean)
    .map((data) => JSON.parse(data));
}

function setLevel(t: TestApp, token: string, headers: Record<string, string>, level: unknown, id: number | string = 'lvl') {
  return rpc(t, token, { jsonrpc: '2.0', id, method: 'logging/setLevel', params: { level } }, headers);
}

/** A raw tools/call of the logging fixture: the levels of the log messages it streamed, and whether it streamed at all. */
async function loggedLevels(t: TestApp, token: string, headers: Record<string, string>): Promise<{ sse: boolean; levels: string[]; messages: any[] }> {
  const res = await rpc(t, token, { jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'log_every_level', arguments: {} } }, headers).buffer(
    true,
  );
  expect(res.status).toBe(200);
  const sse = /^text\/event-stream/.test(res.headers['content-type']);
  const messages = sse ? sseMessages(res.text) : [res.body];
  const last = messages.pop();
  expect(last).toMatchObject({ id: 'call', result: { structuredContent: { logged: 8 } } });
  return { sse, levels: messages.map((m) => m.params.level), messages };
}

describe('logging: logging/setLevel and notifications/message', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    db = await createDatabase();
    const env = { DATABASE_URL: db.url, SYNC_BUDGET_MS: '60000', LOCAL_PROVIDER_DELAY_MS: '400' };
    a = await startTestApp(env, [LogLevelsFixtureModule]);
    b = await startTestApp({ ...env, ROLE: 'api' }, [LogLevelsFixtureModule]);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await db?.drop();
  });

  it('initialize announces the logging capability', async () => {
    const tenant = await createTenant(a);
    const client = await connectClient(a, tenant.key);
    expect(client.getServerCapabilities()?.logging).toEqual({});
    await client.close();
  });

  describe('logging/setLevel', () => {
    it('answers {} with the SDK client', async () => {
      const tenant = await createTenant(a);
      const client = await connectClient(a, tenant.key);
      await expect(client.setLoggingLevel('warning')).resolves.toEqual({});
      await client.close();
    });

    it('a level that is not one of the eight, or no params, is -32602 naming them', async () => {
      const tenant = await createTenant(a);
      const { sessionId } = await initSession(a, tenant.key);
      const headers = sessionHeaders(sessionId);
      for (const level of ['verbose', 'INFO', 3, null, ['info'], { level: 'info' }, undefined]) {
        const res = await setLevel(a, tenant.key, headers, level, 7);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: `Invalid params: "level" must be one of ${LEVELS.join(', ')}.` } });
      }
      for (const params of [undefined, 'info', ['info']]) {
        const res = await rpc(a, tenant.key, { jsonrpc: '2.0', id: 8, method: 'logging/setLevel', ...(params === undefined ? {} : { params }) }, headers);
        expect(res.body.error).toEqual({ code: -32602, message: expect.stringContaining('"level" must be one of') });
      }
    });

    it('without a session it is -32602 saying so', async () => {
      const tenant = await createTenant(a);
      const res = await setLevel(a, tenant.key, { 'MCP-Protocol-Version': '2025-06-18' }, 'info', 3);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32602, message: expect.stringContaining('needs a session') } });
    });

    it('an ended session, or another credential’s, is 404 as for any request', async () => {
      const tenant = await createTenant(a);
      const { sessionId } = await initSession(a, tenant.key);
      const other = await createTenant(a);
      expect((await setLevel(a, other.key, sessionHeaders(sessionId), 'info')).status).toBe(404);
      await a.http.delete('/mcp').set('Authorization', `Bearer ${tenant.key}`).set(sessionHeaders(sessionId)).expect(204);
      expect((await setLevel(b, tenant.key, sessionHeaders(sessionId), 'info')).status).toBe(404);
    });
  });

  describe('notifications/message on the call’s stream', () => {
    it('the SDK client receives the messages at or above the level, in order, named by the tool', async () => {
      const tenant = await createTenant(a);
      const client: Client = await connectClient(a, tenant.key);
      const seen: LoggingMessageNotification['params'][] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        seen.push(n.params);
      });
      try {
        await client.setLoggingLevel('warning');
        const result = await client.callTool({ name: 'log_every_level', arguments: {} });
        expect(result.structuredContent).toEqual({ logged: 8 });
        expect(seen).toEqual(
          ['warning', 'error', 'critical', 'alert', 'emergency'].map((level) => ({ level, logger: 'log_every_level', data: { said: `${level} message` } })),
        );
        seen.length = 0;
        await client.setLoggingLevel('debug');
        await client.callTool({ name: 'log_every_level', arguments: {} });
        expect(seen.map((p) => p.level)).toEqual(LEVELS);
      } finally {
        await client.close();
      }
    });

    it('before any setLevel, without a session, or without text/event-stream: no messages, the answer is plain JSON', async () => {
      const tenant = await createTenant(a);
      const { sessionId } = await initSession(a, tenant.key);
      expect(await loggedLevels(a, tenant.key, sessionHeaders(sessionId))).toMatchObject({ sse: false, levels: [] });
      expect(await loggedLevels(a, tenant.key, { 'MCP-Protocol-Version': '2025-06-18' })).toMatchObject({ sse: false, levels: [] });
      expect((await setLevel(a, tenant.key, sessionHeaders(sessionId), 'debug')).body.result).toEqual({});
      expect(await loggedLevels(a, tenant.key, { ...sessionHeaders(sessionId), Accept: 'application/json' })).toMatchObject({ sse: false, levels: [] });
      const streamed = await loggedLevels(a, tenant.key, sessionHeaders(sessionId));
      expect(streamed).toMatchObject({ sse: true, levels: LEVELS });
      expect(streamed.messages[0]).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'debug', logger: 'log_every_level', data: { said: 'debug message' } },
      });
    });

    it('a level set on instance B applies at once to the session’s next call on instance A', async () => {
      const tenant = await createTenant(a);
      const { sessionId } = await initSession(a, tenant.key);
      const headers = sessionHeaders(sessionId);
      expect((await setLevel(b, tenant.key, headers, 'debug')).status).toBe(200);
      // A reads (and caches) the session with level debug.
      expect((await loggedLevels(a, tenant.key, headers)).levels).toEqual(LEVELS);
      expect((await setLevel(b, tenant.key, headers, 'critical')).status).toBe(200);
      // Within A's cache lifetime: its copy was dropped by the notification (give it a moment to arrive).
      await new Promise((r) => setTimeout(r, 100));
      expect((await loggedLevels(a, tenant.key, headers)).levels).toEqual(['critical', 'alert', 'emergency']);
      expect((await setLevel(b, tenant.key, headers, 'emergency')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      expect((await loggedLevels(a, tenant.key, headers)).levels).toEqual(['emergency']);
    });

    it('a job’s steps are info messages (with or without a progressToken), none at warning', async () => {
      const tenant = await configuredTenant(a);
      const client = await connectClient(a, tenant.key);
      const seen: LoggingMessageNotification['params'][] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        seen.push(n.params);
      });
      try {
        await client.setLoggingLevel('info');
        const result = await client.callTool({ name: 'write_article', arguments: { brief: 'Logged' } });
        expect(result.isError).toBeFalsy();
        expect(seen.length).toBeGreaterThanOrEqual(2);
        for (const p of seen) expect(p).toEqual({ level: 'info', logger: 'write_article', data: expect.stringMatching(/^write_article: /) });
        expect(seen[0].data).toMatch(/queued/);
        expect(seen[seen.length - 1].data).toMatch(/done/);
        seen.length = 0;
        await client.setLoggingLevel('warning');
        await client.callTool({ name: 'write_article', arguments: { brief: 'Quiet' } });
        expect(seen).toEqual([]);
      } finally {
        await client.close();
      }
    });
  });
});
