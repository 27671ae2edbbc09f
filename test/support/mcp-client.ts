import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { request as httpRequest, type Agent } from 'node:http';
import type { TestApp } from './test-app.js';

/** An official MCP SDK client connected to the test app's /mcp with a bearer token, declaring `capabilities` (none by default). */
export async function connectClient(t: Pick<TestApp, 'baseUrl'>, token: string, name = 'jest-client', capabilities: ClientCapabilities = {}): Promise<Client> {
  const client = new Client({ name, version: '1.2.3' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** What every raw POST /mcp carries unless the test says otherwise. */
const DEFAULT_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/**
 * The raw POST /mcp (supertest): `body` is sent as given when a string or bytes, as JSON otherwise;
 * the bearer `token` (none when null), then the default headers, which `headers` override by name
 * (any case) and an empty value removes.
 */
export function rpc(t: Pick<TestApp, 'http'>, token: string | null, body: unknown, headers: Record<string, string> = {}) {
  const all = new Map<string, [string, string]>();
  for (const [k, v] of Object.entries({ ...DEFAULT_HEADERS, ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers }))
    all.set(k.toLowerCase(), [k, v]);
  const req = t.http.post('/mcp');
  for (const [k, v] of all.values()) if (v !== '') req.set(k, v);
  return req.send(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
}

/** A raw answer read off the socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: any;
}

/**
 * POSTs exact bytes to /mcp with node:http, where supertest will not do: bytes sent untouched, a
 * keep-alive `agent` shared by many requests, a socket `timeoutMs`. Only the headers given (plus
 * Content-Length) are sent. Rejects with the socket's error (its `syscall` says whether it connected).
 */
export function postBytes(
  t: Pick<TestApp, 'baseUrl'>,
  bytes: Buffer | string,
  headers: Record<string, string> = {},
  opts: { agent?: Agent; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const url = new URL(t.baseUrl);
  const payload = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent: opts.agent,
        host: url.hostname,
        port: url.port,
        path: '/mcp',
        method: 'POST',
        timeout: opts.timeoutMs,
        headers: { ...headers, 'Content-Length': String(payload.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, text, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT', syscall: 'read' })));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Initializes a session with raw HTTP; returns its id and the answer. */
export async function initSession(
  t: Pick<TestApp, 'http'>,
  token: string,
  protocolVersion = '2025-06-18',
  clientInfo = { name: 'raw-agent', version: '9.9.9' },
) {
  const res = await rpc(t, token, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo } });
  if (res.status !== 200) throw new Error(`initialize answered ${res.status}: ${res.text}`);
  return { sessionId: res.headers['mcp-session-id'] as string, res };
}

/** The headers of a request in session `sessionId` at `protocolVersion`. */
export function sessionHeaders(sessionId: string, protocolVersion = '2025-06-18'): Record<string, string> {
  return { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': protocolVersion };
}

/** A tools/call request body. */
export function call(id: number | string, name: string, args?: unknown) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: args === undefined ? { name } : { name, arguments: args } };
}

/** The JSON value inside a tool result's single text block. */
export function toolJson(result: any): any {
  const content = result.content as { type: string; text: string }[];
  return JSON.parse(content[0].text);
}

/** What a raw `tools/call` answered: the HTTP status, and either the tool's JSON or the JSON-RPC error. */
export interface CallOutcome {
  status: number;
  isError: boolean;
  /** The JSON of the single text block (the value, or `{"error":{...}}`). */
  json: any;
  structured?: any;
  rpcError?: { code: number; message: string };
}

let nextId = 1;

/** `tools/call` over raw HTTP (no session, like a stateless client). */
export async function callTool(t: Pick<TestApp, 'http'>, token: string, name: string, args: Record<string, unknown> = {}): Promise<CallOutcome> {
  const res = await rpc(t, token, call(nextId++, name, args));
  const body = res.body as {
    result?: { content: { text: string }[]; isError?: boolean; structuredContent?: unknown };
    error?: { code: number; message: string };
  };
  if (body?.error || !body?.result) return { status: res.status, isError: false, json: undefined, rpcError: body?.error };
  return { status: res.status, isError: body.result.isError === true, json: toolJson(body.result), structured: body.result.structuredContent };
}

/** Like {@link callTool}, but the call must have succeeded: answers the tool's value. */
export async function callOk(t: Pick<TestApp, 'http'>, token: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const out = await callTool(t, token, name, args);
  if (out.status !== 200 || out.isError || out.rpcError)
    throw new Error(`${name} ${JSON.stringify(args).slice(0, 200)} failed: ${JSON.stringify(out).slice(0, 500)}`);
  return out.json;
}

/** Like {@link callTool}, but the call must have been a tool error (no structuredContent): answers `{code, message}`. */
export async function callError(
  t: Pick<TestApp, 'http'>,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ code: string; message: string }> {
  const out = await callTool(t, token, name, args);
  if (out.status !== 200 || !out.isError) throw new Error(`${name} was expected to be a tool error: ${JSON.stringify(out).slice(0, 500)}`);
  expect(out.structured).toBeUndefined();
  return out.json.error;
}
