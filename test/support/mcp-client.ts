import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from './test-app.js';

/** An official MCP SDK client connected to the test app's /mcp with a bearer token. */
export async function connectClient(t: TestApp, token: string, name = 'jest-client'): Promise<Client> {
  const client = new Client({ name, version: '1.2.3' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** A raw JSON-RPC POST to /mcp. */
export function rpc(t: TestApp, token: string | null, body: unknown, headers: Record<string, string> = {}) {
  const req = t.http.post('/mcp').set('Content-Type', 'application/json').set('Accept', 'application/json, text/event-stream');
  if (token) req.set('Authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(headers)) req.set(k, v);
  return req.send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** The JSON value inside a tool result's single text block. */
export function toolJson(result: any): any {
  const content = result.content as { type: string; text: string }[];
  return JSON.parse(content[0].text);
}
