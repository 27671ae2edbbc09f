import { rpc } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

export const MODERN = '2026-07-28';
/** What the conformance suite's 2026 client declares by default. */
export const ALL_CAPS = { sampling: {}, elicitation: {}, roots: { listChanged: true } };

let nextId = 1;

/**
 * One 2026-07-28 request as a stateless client sends it (design-15 §0): the protocol headers, and the
 * version, client and capabilities in `params._meta`. Answers `{status, body}` (JSON).
 */
export async function modern(t: Pick<TestApp, 'http'>, token: string, method: string, params: Record<string, unknown> = {}, caps: Record<string, unknown> = ALL_CAPS) {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const body = {
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientInfo': { name: 'mrtr-e2e', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': caps,
      },
    },
  };
  const res = await rpc(t, token, body, { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...(name !== undefined ? { 'Mcp-Name': name } : {}) });
  const parsed = res.body && typeof res.body === 'object' && Object.keys(res.body).length ? res.body : JSON.parse(res.text);
  if (parsed.id !== body.id) throw new Error(`answer id ${JSON.stringify(parsed.id)} for request ${body.id}: ${res.text}`);
  return { status: res.status, body: parsed, result: parsed.result, error: parsed.error };
}

/** tools/call in 2026-07-28, with the retry's fields when given. */
export function callModern(t: Pick<TestApp, 'http'>, token: string, name: string, args: Record<string, unknown> = {}, retry: { inputResponses?: unknown; requestState?: unknown } = {}, caps: Record<string, unknown> = ALL_CAPS) {
  return modern(t, token, 'tools/call', { name, arguments: args, ...retry }, caps);
}

/** An elicitation answer. */
export function accept(content: Record<string, unknown>) {
  return { action: 'accept', content };
}

/** The JSON a product tool answered (its text block). */
export function toolValue(result: any): any {
  return JSON.parse(result.content[0].text);
}
