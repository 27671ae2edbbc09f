import { withClient } from '../support/database.js';
import { callOk, rpc, sessionHeaders } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

export const VERSION = '2025-11-25';

/** A raw session whose client declared `capabilities`; answers the headers of its requests. */
export async function rawSession(
  t: TestApp,
  token: string,
  capabilities: Record<string, unknown> = { elicitation: {} },
): Promise<{ sessionId: string; headers: Record<string, string> }> {
  const res = await rpc(t, token, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities, clientInfo: { name: 'raw-elicit', version: '1' } },
  });
  if (res.status !== 200) throw new Error(`initialize answered ${res.status}: ${res.text}`);
  const sessionId = res.headers['mcp-session-id'] as string;
  return { sessionId, headers: sessionHeaders(sessionId, VERSION) };
}

/** POSTs the client's JSON-RPC response to a server request. */
export function respond(t: TestApp, token: string, headers: Record<string, string>, id: string, answer: { result?: unknown; error?: unknown }) {
  return rpc(t, token, { jsonrpc: '2.0', id, ...answer }, headers);
}

/** A tools/call request body. */
export function toolCall(id: number | string, name: string, args: Record<string, unknown>) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/** A new draft article of the tenant's single project. */
export async function newArticle(t: TestApp, token: string, title = 'Sourdough basics'): Promise<{ id: string; handle: string; title: string }> {
  return callOk(t, token, 'create_article', { title, body: 'Flour, water, salt.' });
}

/** Whether the article is still live (not trashed). */
export async function articleLive(t: TestApp, token: string, id: string): Promise<boolean> {
  const res = await rpc(t, token, toolCall(999, 'get_article', { id }));
  return res.body.result.isError !== true;
}

/** The pending server→client requests of a session, as Postgres holds them. */
export function pendingRequests(url: string, sessionId: string): Promise<any[]> {
  return withClient(url, async (c) => (await c.query('SELECT * FROM mcp_client_requests WHERE session_id = $1', [sessionId])).rows);
}
