import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { KEEP_ALIVE_MS, SessionStreams } from '../../src/mcp/session-streams.js';
import { articleHandleUri, articleUri } from '../../src/resources/resource-uris.js';
import { eventually, startInstances, withClient, type TestDatabase } from '../support/database.js';
import { admin, createTenant, newKey, withRole, type Tenant } from '../support/fixtures.js';
import { callOk, connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/** A GET /mcp event stream read off the socket: its status, the JSON-RPC messages and comments seen so far. */
interface Stream {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body when the answer is not a stream. */
  body: string;
  messages: any[];
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Waits for a message matching `match`, failing after `timeoutMs`. */
  next(match: (m: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): void;
}

function openStream(t: TestApp, token: string, sessionId: string | null, accept = 'text/event-stream'): Promise<Stream> {
  const url = new URL(t.baseUrl);
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: accept, ...(sessionId ? sessionHeaders(sessionId, '2025-11-25') : {}) };
  return new Promise((resolve, reject) => {
    const req: ClientRequest = httpRequest({ host: url.hostname, port: url.port, path: '/mcp', method: 'GET', headers }, (res) => {
      let buffer = '';
      let endStream!: () => void;
      const stream: Stream = {
        status: res.statusCode!,
        headers: res.headers,
        body: '',
        messages: [],
        comments: [],
        ended: new Promise((r) => (endStream = r)),
        async next(match, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const found = stream.messages.find(match);
            if (found) return found;
            if (Date.now() > deadline) throw new Error(`No matching message within ${timeoutMs} ms; seen: ${JSON.stringify(stream.messages)}`);
            await sleep(20);
          }
        },
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!String(res.headers['content-type']).startsWith('text/event-stream')) {
          stream.body += chunk;
          return;
        }
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          for (const line of event.split('\n')) {
            if (line.startsWith(':')) stream.comments.push(line.slice(1).trim());
            if (line.startsWith('data: ')) stream.messages.push(JSON.parse(line.slice(6)));
          }
        }
      });
      res.on('end', () => endStream());
      res.on('close', () => endStream());
      res.on('error', () => endStream());
      // A stream answers its headers at once; an error body ends soon after.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) resolve(stream);
      else res.on('end', () => resolve(stream));
    });
    req.on('error', reject);
    req.end();
  });
}

const updated = (uri: string) => (m: any) => m.method === 'notifications/resources/updated' && m.params?.uri === uri;

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer!: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('GET /mcp and notifications/resources/updated across instances', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, { ROLE: 'api' }));
  });
  afterAll(() => db?.drop());

  /** A tenant, one of its articles, and an initialized session of its key (on A). */
  async function setup(): Promise<{ tenant: Tenant; project: string; article: any; sessionId: string }> {
    const tenant = await createTenant(a);
    const [project] = tenant.projectIds;
    const article = await callOk(a, tenant.key, 'create_article', { title: 'Watched post', body: 'First version.' });
    const { sessionId } = await initSession(a, tenant.key, '2025-11-25');
    return { tenant, project, article, sessionId };
  }

  async function inSession(t: TestApp, key: string, sessionId: string, method: string, params: unknown): Promise<any> {
    const res = await rpc(t, key, { jsonrpc: '2.0', id: 1, method, params }, sessionHeaders(sessionId, '2025-11-25'));
    expect(res.status).toBe(200);
    return res.body;
  }

  it("opens a session's event stream (200, text/event-stream); 400 without a session, 406 without Accept: text/event-stream, 404 for another credential's session", async () => {
    const { tenant, sessionId } = await setup();
    const stream = await openStream(a, tenant.key, sessionId);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['cache-control']).toMatch(/no-cache/);
    stream.close();

    const none = await openStream(a, tenant.key, null);
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringMatching(/Mcp-Session-Id.*cannot subscribe/) },
    });
    for (const accept of ['application/json', '*/*', '']) {
      const refused = await openStream(a, tenant.key, sessionId, accept);
      expect(refused.status).toBe(406);
      expect(JSON.parse(refused.body).error.message).toMatch(/Accept: text\/event-stream/);
    }
    const other = await createTenant(a);
    expect((await openStream(a, other.key, sessionId)).status).toBe(404);
    expect((await openStream(b, tenant.key, 'no-such-session')).status).toBe(404);
  });

  it('writes notifications/resources/updated with the subscribed URIs on the stream held by A when the article changes through B, subscribed through B', async () => {
    const { tenant, project, article, sessionId } = await setup();
    const stream = await openStream(a, tenant.key, sessionId);
    const byId = articleUri(project, article.id);
    const byHandle = articleHandleUri(project, article.handle);
    expect(await inSession(b, tenant.key, sessionId, 'resources/subscribe', { uri: byId })).toMatchObject({ result: {} });
    expect(await inSession(b, tenant.key, sessionId, 'resources/subscribe', { uri: byHandle })).toMatchObject({ result: {} });

    // Another credential of the account changes it, statelessly, on B.
    const { key: editor } = await newKey(b, tenant.accountId, withRole([project], 'editor'));
    await callOk(b, editor, 'update_article', { id: article.id, version: article.version, body: 'Second version.' });
    await stream.next(updated(byId));
    await stream.next(updated(byHandle));
    expect(stream.messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: expect.any(String) } },
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: expect.any(String) } },
    ]);

    // Unsubscribed from the by-id URI: the next change (a publish) names the handle only.
    expect(await inSession(b, tenant.key, sessionId, 'resources/unsubscribe', { uri: byId })).toMatchObject({ result: {} });
    stream.messages.length = 0;
    await callOk(b, editor, 'publish_article', { id: article.id });
    await stream.next(updated(byHandle));
    await sleep(300);
    expect(stream.messages.filter(updated(byId))).toEqual([]);
    expect(stream.messages).toHaveLength(1);

    // Trashing it is a change too (reading it is then "not found").
    stream.messages.length = 0;
    await callOk(b, tenant.key, 'delete_article', { id: article.id });
    await stream.next(updated(byHandle));
    stream.close();
  });

  it("reaches the official SDK client's notification handler (its own GET stream) when another instance changes the article", async () => {
    const tenant = await createTenant(a);
    const [project] = tenant.projectIds;
    const article = await callOk(b, tenant.key, 'create_article', { title: 'SDK watched' });
    const client = await connectClient(a, tenant.key);
    const seen: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      seen.push(n.params.uri);
    });
    const uri = articleUri(project, article.id);
    await expect(client.subscribeResource({ uri })).resolves.toEqual({});
    // The SDK opens its GET stream after initialize, without waiting: the update is sent once it is open.
    await sleep(300);
    await callOk(b, tenant.key, 'update_article', { id: article.id, version: article.version, title: 'Retitled' });
    const deadline = Date.now() + 10_000;
    while (!seen.length && Date.now() < deadline) await sleep(20);
    expect(seen).toEqual([uri]);
    await expect(client.unsubscribeResource({ uri })).resolves.toEqual({});
    await callOk(b, tenant.key, 'update_article', { id: article.id, version: article.version + 1, title: 'Again' });
    await sleep(500);
    expect(seen).toEqual([uri]);
    await client.close();
  });

  it('sends nothing for a change of an article nobody watches: the trigger notifies only when a subscription exists', async () => {
    const { tenant, project, article, sessionId } = await setup();
    const other = await callOk(a, tenant.key, 'create_article', { title: 'Not watched' });
    await inSession(a, tenant.key, sessionId, 'resources/subscribe', { uri: articleUri(project, article.id) });
    await withClient(db.url, async (listener) => {
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      await listener.query('LISTEN reblog_resources');
      await callOk(b, tenant.key, 'update_article', { id: other.id, version: other.version, title: 'Changed, unwatched' });
      await callOk(b, tenant.key, 'update_article', { id: article.id, version: article.version, title: 'Changed, watched' });
      const deadline = Date.now() + 5_000;
      while (!heard.length && Date.now() < deadline) await sleep(20);
      await sleep(200);
      expect(heard).toEqual([article.id]);
    });
  });

  it('keeps the stream alive with comments while its session lives (a use of it), and closes it when the session is gone', async () => {
    const { tenant, sessionId } = await setup();
    a.app.get(SessionStreams).keepAliveMs = 100;
    try {
      const stream = await openStream(a, tenant.key, sessionId);
      const deadline = Date.now() + 5_000;
      while (stream.comments.filter((c) => c === 'keep-alive').length < 3 && Date.now() < deadline) await sleep(20);
      expect(stream.comments.filter((c) => c === 'keep-alive').length).toBeGreaterThanOrEqual(3);
      // Expired and purged (as the purge deletes it): the next check finds no session.
      await withClient(db.url, (c) => c.query(`DELETE FROM mcp_sessions WHERE id = $1`, [sessionId]));
      await within(stream.ended, 5_000, 'the stream end');
    } finally {
      a.app.get(SessionStreams).keepAliveMs = KEEP_ALIVE_MS;
    }
  });

  it('sends an update only while the project is still readable: get_article disabled there after the subscription stops them, enabled again resumes them', async () => {
    const { tenant, project, article, sessionId } = await setup();
    const stream = await openStream(a, tenant.key, sessionId);
    const uri = articleUri(project, article.id);
    await inSession(a, tenant.key, sessionId, 'resources/subscribe', { uri });
    await admin(b, 'patch', `/admin/v1/projects/${project}`, { disabled_tools: ['get_article'] }, 200);
    await callOk(b, tenant.key, 'update_article', { id: article.id, version: article.version, title: 'Unseen change' });
    await sleep(500);
    expect(stream.messages).toEqual([]);
    await admin(b, 'patch', `/admin/v1/projects/${project}`, { disabled_tools: [] }, 200);
    await callOk(b, tenant.key, 'update_article', { id: article.id, version: article.version + 1, title: 'Seen change' });
    await stream.next(updated(uri));
    stream.close();
  });

  it('closes the stream at its next check once its credential is revoked (on another instance)', async () => {
    const tenant = await createTenant(a);
    const { key, id } = await newKey(a, tenant.accountId, withRole(tenant.projectIds, 'viewer'), ['read']);
    const { sessionId } = await initSession(a, key, '2025-11-25');
    a.app.get(SessionStreams).keepAliveMs = 100;
    try {
      const stream = await openStream(a, key, sessionId);
      await admin(b, 'delete', `/admin/v1/api-keys/${id}`, undefined);
      await within(stream.ended, 5_000, 'the stream end');
      expect((await openStream(a, key, sessionId)).status).toBe(401);
    } finally {
      a.app.get(SessionStreams).keepAliveMs = KEEP_ALIVE_MS;
    }
  });

  it('closes the stream when the session ends on another instance (DELETE on B)', async () => {
    const { tenant, sessionId } = await setup();
    const stream = await openStream(a, tenant.key, sessionId);
    await b.http.delete('/mcp').set('Authorization', `Bearer ${tenant.key}`).set('Mcp-Session-Id', sessionId).expect(204);
    await within(stream.ended, 5_000, 'the stream end');
    expect((await openStream(a, tenant.key, sessionId)).status).toBe(404);
  });

  it('keeps one stream per session: a newer one on B replaces the older one on A, and updates go to the newer', async () => {
    const { tenant, project, article, sessionId } = await setup();
    const older = await openStream(a, tenant.key, sessionId);
    // Let A's own announcement come back first, as it would for any stream open for a while.
    await sleep(300);
    const newer = await openStream(b, tenant.key, sessionId);
    await within(older.ended, 5_000, 'the older stream end');
    const uri = articleUri(project, article.id);
    await inSession(a, tenant.key, sessionId, 'resources/subscribe', { uri });
    await callOk(a, tenant.key, 'update_article', { id: article.id, version: article.version, title: 'For the newer stream' });
    await newer.next(updated(uri));
    expect(older.messages).toEqual([]);
    // A newer one on the same instance replaces it too.
    const newest = await openStream(b, tenant.key, sessionId);
    await within(newer.ended, 5_000, 'the replaced stream end');
    newest.close();
  });

  it('sends the updates it missed while its LISTEN connection was cut once it listens again, and only those', async () => {
    const { tenant, project, article, sessionId } = await setup();
    const other = await callOk(a, tenant.key, 'create_article', { title: 'Also watched', body: 'Unchanged.' });
    const stream = await openStream(a, tenant.key, sessionId);
    const changed = articleUri(project, article.id);
    const unchanged = articleUri(project, other.id);
    for (const uri of [changed, unchanged]) expect(await inSession(a, tenant.key, sessionId, 'resources/subscribe', { uri })).toMatchObject({ result: {} });
    // Written long enough ago to fall outside the few seconds of slack the catch-up allows for clocks.
    await withClient(db.url, (c) => c.query(`UPDATE articles SET updated_at = now() - interval '1 minute' WHERE id = $1`, [other.id]));
    await sleep(300);
    stream.messages.length = 0;

    const listeners = () =>
      withClient(db.url, async (c) =>
        (await c.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'reblog-mcp-listen' AND datname = current_database()`)).rows.map(
          (r) => r.pid as number,
        ),
      );
    const cut = await listeners();
    expect(cut).toHaveLength(2);
    await withClient(db.url, (c) => c.query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [cut]));
    await eventually(listeners, (pids) => !pids.some((pid) => cut.includes(pid)), 5_000, 10);
    // Changed while nobody listens (instances wait a second before listening again): the trigger's notification is lost.
    await callOk(b, tenant.key, 'update_article', { id: article.id, version: article.version, body: 'Changed while A was not listening.' });
    await eventually(listeners, (pids) => pids.length === 2, 5_000, 50);
    await stream.next(updated(changed));
    await sleep(300);
    expect(stream.messages).toEqual([{ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: changed } }]);
    stream.close();
  });

  it('closes its streams when the server stops, so the shutdown does not wait for them', async () => {
    const c = await db.app({ ROLE: 'api' });
    const tenant = await createTenant(c);
    const { sessionId } = await initSession(c, tenant.key, '2025-11-25');
    const stream = await openStream(c, tenant.key, sessionId);
    await within(c.close(), 10_000, 'the shutdown');
    await within(stream.ended, 1_000, 'the stream end');
  });

  it('counts GET as protocol chatter in the activity log: one entry when the stream opens', async () => {
    const { tenant, sessionId } = await setup();
    const stream = await openStream(a, tenant.key, sessionId);
    stream.close();
    const entries = await withClient(
      db.url,
      async (c) => (await c.query(`SELECT method, outcome, session_id FROM activity_log WHERE account_id = $1 AND method = 'GET'`, [tenant.accountId])).rows,
    );
    expect(entries).toEqual([{ method: 'GET', outcome: 'ok', session_id: sessionId }]);
  });
});
