import { rpc } from './mcp-client.js';
import type { TestApp } from './test-app.js';

/**
 * The MCP 2026-07-28 wire, raw (no SDK client speaks it yet): what the conformance suite's stateless
 * client sends (docs/protocol.md#the-2026-07-28-era) — the `MCP-Protocol-Version`, `Mcp-Method` and
 * `Mcp-Name` headers, and `params._meta` with the protocol version, the client's capabilities and
 * (optionally) its identity.
 * The one builder of 2026 requests for every test folder.
 */
export const MODERN = '2026-07-28';
export const CLIENT_INFO = { name: 'wire-2026-client', version: '2.0.0' };
export const META_KEYS = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
};

/** The `_meta` of a 2026 request: version, capabilities (none by default), clientInfo; `extra` keys override. */
export function meta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { [META_KEYS.protocolVersion]: MODERN, [META_KEYS.clientInfo]: CLIENT_INFO, [META_KEYS.clientCapabilities]: {}, ...extra };
}

/** The param a method's `Mcp-Name` header repeats. */
const NAME_PARAM: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export interface ModernOptions {
  /** `params._meta` as sent (default {@link meta}()); null: none. */
  meta?: Record<string, unknown> | null;
  /** Headers over the conformant ones; an empty value removes one. */
  headers?: Record<string, string>;
}

/** The headers a conformant 2026 client sends for `method` with `params`. */
export function modernHeaders(method: string, params: Record<string, unknown> = {}): Record<string, string> {
  const param = NAME_PARAM[method];
  return { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...(param && typeof params[param] === 'string' ? { 'Mcp-Name': params[param] } : {}) };
}

/** The body of a 2026 request. */
export function modernBody(
  id: number | string | undefined,
  method: string,
  params: Record<string, unknown> = {},
  metaValue: Record<string, unknown> | null = meta(),
) {
  return { jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, params: metaValue === null ? params : { ...params, _meta: metaValue } };
}

/** POSTs one 2026 request (supertest): conformant headers and `_meta` unless `opts` say otherwise. */
export function modern(
  t: Pick<TestApp, 'http'>,
  token: string | null,
  id: number | string | undefined,
  method: string,
  params: Record<string, unknown> = {},
  opts: ModernOptions = {},
) {
  return rpc(t, token, modernBody(id, method, params, opts.meta === undefined ? meta() : opts.meta), { ...modernHeaders(method, params), ...opts.headers });
}

/** A parsed answer to {@link ask}. */
export interface Answer {
  status: number;
  body: any;
  result: any;
  error: any;
}

let nextId = 1;

/**
 * One 2026 request with a fresh id, conformant headers and `_meta` declaring `caps` as the client's
 * capabilities (`metaExtra` keys over those); fails unless the answer echoes the id.
 */
export async function ask(
  t: Pick<TestApp, 'http'>,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  caps: Record<string, unknown> = {},
  metaExtra: Record<string, unknown> = {},
): Promise<Answer> {
  const id = nextId++;
  const res = await modern(t, token, id, method, params, { meta: meta({ [META_KEYS.clientCapabilities]: caps, ...metaExtra }) });
  const body = res.body && typeof res.body === 'object' && Object.keys(res.body).length ? res.body : JSON.parse(res.text);
  if (body.id !== id) throw new Error(`answer id ${JSON.stringify(body.id)} for request ${id}: ${res.text}`);
  return { status: res.status, body, result: body.result, error: body.error };
}

/** Asserts a JSON-RPC error answer: its HTTP status, code and echoed id; returns the error object. */
export function expectError(
  res: { status: number; headers: Record<string, string>; body: any; text: string },
  status: number,
  code: number,
  id: unknown,
): { code: number; message: string; data?: any } {
  if (res.status !== status || res.body?.error?.code !== code) throw new Error(`expected ${status}/${code}, got ${res.status}: ${res.text.slice(0, 400)}`);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'id', 'jsonrpc']);
  expect(res.body.id).toEqual(id);
  expect(res.body.error.message.length).toBeGreaterThan(10);
  return res.body.error;
}

/** Asserts a 2026 result: 200, JSON, the id echoed, `resultType` and the server's identity in `_meta`; returns the result. */
export function expectModernResult(res: { status: number; body: any; text: string }, id: unknown, resultType = 'complete'): any {
  if (res.status !== 200 || !res.body?.result) throw new Error(`expected a result, got ${res.status}: ${res.text.slice(0, 400)}`);
  expect(res.body.id).toEqual(id);
  expect(res.body.result.resultType).toBe(resultType);
  expect(res.body.result._meta[META_KEYS.serverInfo]).toEqual({ name: 'reblog-mcp', version: expect.any(String) });
  return res.body.result;
}
