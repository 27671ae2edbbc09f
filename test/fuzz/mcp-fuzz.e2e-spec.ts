import fc from 'fast-check';
import { Agent } from 'node:http';
import request from 'supertest';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { postBytes, rpc } from '../support/mcp-client.js';
import { type ServerProcess, startServer } from '../support/server-process.js';

/**
 * Bad input at volume (docs/scaling.md#measured, "Bad input"): generated malformed envelopes and
 * tool arguments against a real server process. Each answer is checked against an oracle that
 * follows the order of checks (docs/protocol.md#order-of-checks): size → session → protocol version → parse → content
 * type → envelope → method → tool arguments. Never a 5xx, never an internal error, the process alive.
 */

const MAX_BODY = 1024 * 1024;
const MAX_DEPTH = 64;
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean']);
const KNOWN_METHODS = new Set(['initialize', 'ping', 'tools/list', 'tools/call']);
const SUPPORTED_VERSIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26']);

interface Case {
  body: Buffer;
  contentType?: string;
  version?: string;
  session?: string;
}

interface Answer {
  status: number;
  text: string;
}

/** What the server must answer, as far as the envelope decides it. */
type Expected = { status: number; code: number; id: unknown } | { status: 202 } | { status: 200; result: 'any' | 'tool'; id: unknown };

interface ToolInfo {
  properties: Record<string, { type?: string }>;
}

let tools: Map<string, ToolInfo>;

function isId(v: unknown): boolean {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || v === null;
}

function depth(value: unknown, level = 0): number {
  if (level > MAX_DEPTH || value === null || typeof value !== 'object') return level;
  let max = level + 1;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    max = Math.max(max, depth(child, level + 1));
    if (max > MAX_DEPTH) break;
  }
  return max;
}

function hasForbiddenKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasForbiddenKey);
  return Object.keys(value).some((k) => FORBIDDEN.has(k) || hasForbiddenKey((value as Record<string, unknown>)[k]));
}

/** The oracle. */
function expected(c: Case): Expected {
  if (c.body.length > MAX_BODY) return { status: 413, code: -32600, id: null };
  let parsed: unknown;
  let parseError: number | null = null;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(c.body));
  } catch {
    parseError = -32700;
  }
  const object = parseError === null && parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  const id = object && isId(object.id) ? object.id : null;
  if (c.session) return { status: 404, code: -32001, id };
  if (object?.method !== 'initialize' && c.version && !SUPPORTED_VERSIONS.has(c.version)) return { status: 400, code: -32600, id };
  if (parseError !== null) return { status: 400, code: parseError, id: null };
  if (depth(parsed) > MAX_DEPTH) return { status: 400, code: -32600, id };
  if (!JSON_TYPE.test(c.contentType ?? '')) return { status: 400, code: -32600, id };
  if (!object) return { status: 400, code: -32600, id: null };
  const validId = !('id' in object) || typeof object.id === 'string' || (typeof object.id === 'number' && Number.isFinite(object.id));
  const isRequest = typeof object.method === 'string';
  const isResponse = !('method' in object) && ('result' in object || 'error' in object) && 'id' in object;
  if (object.jsonrpc !== '2.0' || !validId || !(isRequest || isResponse)) return { status: 400, code: -32600, id };
  if (!isRequest || !('id' in object)) return { status: 202 };
  const method = object.method as string;
  if (!KNOWN_METHODS.has(method)) return { status: 200, code: -32601, id };
  const params = object.params;
  if (method === 'initialize') {
    const ok =
      params !== null && typeof params === 'object' && !Array.isArray(params) && typeof (params as { protocolVersion?: unknown }).protocolVersion === 'string';
    return ok ? { status: 200, result: 'any', id } : { status: 200, code: -32602, id };
  }
  if (method !== 'tools/call') return { status: 200, result: 'any', id };
  return toolExpectation(params, id);
}

/** tools/call: the argument guard's refusals are certain; past it, a tool error or a result. */
function toolExpectation(params: unknown, id: unknown): Expected {
  const invalid = { status: 200, code: -32602, id };
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return invalid;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || !tools.has(name)) return invalid;
  if (args === undefined) return { status: 200, result: 'tool', id };
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return invalid;
  if (hasForbiddenKey(args)) return invalid;
  const schema = tools.get(name)!;
  for (const [key, value] of Object.entries(args)) {
    if (value === null || typeof value !== 'object') continue;
    const declared = key === 'project_id' ? { type: 'string' } : schema.properties[key];
    if (!declared || SCALAR_TYPES.has(declared.type ?? '')) return invalid;
  }
  // Project routing: no generated project_id names the credential's project, so any is refused.
  if ('project_id' in args) return invalid;
  return { status: 200, result: 'tool', id };
}

function send(agent: Agent, server: ServerProcess, token: string, c: Case): Promise<Answer> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream' };
  if (c.contentType !== undefined) headers['Content-Type'] = c.contentType;
  if (c.version !== undefined) headers['MCP-Protocol-Version'] = c.version;
  if (c.session !== undefined) headers['Mcp-Session-Id'] = c.session;
  return postBytes(server, c.body, headers, { agent });
}

function check(c: Case, a: Answer): void {
  const want = expected(c);
  const context = `request ${c.body.subarray(0, 300).toString('utf8')} (${c.body.length} bytes, type ${c.contentType}, version ${c.version}, session ${c.session}) answered ${a.status} ${a.text.slice(0, 400)}`;
  if (a.status >= 500) throw new Error(`5xx: ${context}`);
  if (a.status !== want.status) throw new Error(`expected HTTP ${want.status}: ${context}`);
  if (want.status === 202) {
    if (a.text !== '') throw new Error(`expected no body: ${context}`);
    return;
  }
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    throw new Error(`not JSON: ${context}`);
  }
  if (body.jsonrpc !== '2.0' || !('id' in body)) throw new Error(`not a JSON-RPC message: ${context}`);
  if ('code' in want) {
    if (body.error?.code !== want.code || typeof body.error.message !== 'string' || !body.error.message)
      throw new Error(`expected error ${want.code}: ${context}`);
    if (!Object.is(body.id, want.id) && JSON.stringify(body.id) !== JSON.stringify(want.id))
      throw new Error(`expected id ${JSON.stringify(want.id)}: ${context}`);
    return;
  }
  if (!('result' in want)) throw new Error(`expected no body: ${context}`);
  if (JSON.stringify(body.id) !== JSON.stringify(want.id)) throw new Error(`expected id ${JSON.stringify(want.id)}: ${context}`);
  if (want.result === 'any') {
    if (body.result === undefined) throw new Error(`expected a result: ${context}`);
    return;
  }
  // A tool call past the argument guard and routing: a tool result or a tool error, never a JSON-RPC error.
  if (body.error) throw new Error(`expected a tool result or tool error: ${context}`);
  const content = body.result?.content;
  if (!Array.isArray(content) || typeof content[0]?.text !== 'string') throw new Error(`expected tool content: ${context}`);
  if (body.result.isError) {
    const error = JSON.parse(content[0].text).error;
    if (typeof error?.code !== 'string' || typeof error.message !== 'string') throw new Error(`expected {"error":{"code","message"}}: ${context}`);
  }
}

// ---- generators -----------------------------------------------------------------------------

const json = fc.jsonValue({ maxDepth: 4 });
const anyId = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 12 }),
  fc.double(),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const unknownMethod = fc.oneof(
  fc.constantFrom('nope', 'tools/lists', 'TOOLS/LIST', 'resources/reads', 'x'.repeat(3000)),
  fc.string({ maxLength: 20 }).map((s) => `x-fuzz/${s}`),
);
const method = fc.oneof(fc.constantFrom('ping', 'tools/list', 'tools/call', 'initialize'), unknownMethod, json);

/** Envelopes that are almost right: every member may be missing or of a wrong type. */
const envelope = fc.record(
  {
    jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant('2.0') }, fc.constantFrom('1.0', 2, null, '2.0 ')),
    id: fc.oneof({ weight: 3, arbitrary: fc.integer() }, anyId),
    method,
    params: fc.oneof(
      json,
      fc.record({ protocolVersion: fc.oneof(fc.constant('2025-06-18'), json), capabilities: json, clientInfo: json }, { requiredKeys: [] }),
    ),
    result: json,
  },
  { requiredKeys: [] },
);

const scalarJunk = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.string({ maxLength: 30 }), fc.constant('x'.repeat(200_000)));
const structuredJunk = fc.oneof(
  fc.object({ maxDepth: 2 }),
  fc.array(json, { maxLength: 3 }),
  fc.constant({ $ne: null }),
  fc.constant({ $gt: '' }),
  fc.constant(['a', 'b']),
);

/** tools/call with arguments of every wrong shape, against the tools this credential sees. */
function toolCall(names: string[], params: string[]) {
  const args = fc.oneof(
    fc.dictionary(fc.constantFrom(...params, 'project_id', 'unexpected', 'constructor'), fc.oneof(scalarJunk, structuredJunk), { maxKeys: 4 }),
    fc.dictionary(fc.constantFrom(...params), structuredJunk, { minKeys: 1, maxKeys: 2 }),
    json,
    fc.constant(undefined),
  );
  return fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.integer({ min: 1 }),
    method: fc.constant('tools/call'),
    params: fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record(
          { name: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...names) }, fc.constantFrom('delete_article', 'nope'), json), arguments: args },
          { requiredKeys: ['name'] },
        ),
      },
      json,
    ),
  });
}

/** Text-level damage that objects cannot express: __proto__ keys, invalid UTF-8, deep nesting, truncation. */
function damaged(text: string, kind: number, n: number): Buffer {
  switch (kind) {
    case 0:
      return Buffer.from(text.replace(/^\{/, `{"__proto__":{"polluted":${n}},`));
    case 1:
      return Buffer.from(text.replace('"arguments":{', `"arguments":{"__proto__":{"isAdmin":true},`));
    case 2: {
      const bytes = Buffer.from(text);
      const at = n % Math.max(1, bytes.length);
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), bytes.subarray(at)]);
    }
    case 3:
      return Buffer.from(text.replace(/\}$/, `,"params":${'['.repeat(40 + (n % 80))}${']'.repeat(40 + (n % 80))}}`));
    case 4:
      return Buffer.from(text.slice(0, Math.max(0, text.length - 1 - (n % 5))));
    default:
      return Buffer.from(text);
  }
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  fc.constantFrom(
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    'text/event-stream',
  ),
  fc.constant(undefined),
);
const version = fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, fc.constantFrom('2025-06-18', '2025-11-25', '1999-01-01', 'garbage', ''));
const session = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  fc.string({ minLength: 1, maxLength: 40 }).filter((s) => /^[\x21-\x7e]+$/.test(s)),
);

describe('bad input at volume (property-based)', () => {
  let server: ServerProcess;
  let tenant: Tenant;
  let agent: Agent;
  let sent = 0;

  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT_PER_SECOND: '1000000', ROLE: 'api' });
    tenant = await createTenant(server, { projects: 1, scopes: ['read'], role: 'viewer' });
    agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const list = await rpc(server, tenant.key, { jsonrpc: '2.0', id: 0, method: 'tools/list' }, { Accept: '' });
    tools = new Map(list.body.result.tools.map((t: { name: string; inputSchema: ToolInfo }) => [t.name, { properties: t.inputSchema.properties ?? {} }]));
    expect(tools.size).toBeGreaterThan(3);
  }, 120_000);

  afterAll(async () => {
    agent?.destroy();
    await server?.stop('SIGTERM');
  });

  const run = async (c: Case) => {
    sent++;
    check(c, await send(agent, server, tenant.key, c));
  };

  it('answers malformed envelopes, bodies, content types and headers with the documented error', async () => {
    const body = fc.oneof(
      { weight: 3, arbitrary: envelope.map((e) => Buffer.from(JSON.stringify(e))) },
      json.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
      fc.array(envelope, { maxLength: 3 }).map((batch) => Buffer.from(JSON.stringify(batch))),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.tuple(envelope, fc.integer({ min: 0, max: 4 }), fc.nat()).map(([e, kind, n]) => damaged(JSON.stringify(e), kind, n)),
    );
    await fc.assert(
      fc.asyncProperty(body, contentType, version, session, async (b, type, v, s) => run({ body: b, contentType: type, version: v, session: s })),
      { numRuns: 700 },
    );
  }, 120_000);

  it('answers tools/call with objects for scalars, __proto__, wrong types and huge strings with -32602 or a tool error, never an internal error', async () => {
    const names = [...tools.keys()];
    const params = [...new Set([...tools.values()].flatMap((t) => Object.keys(t.properties)))];
    const call = fc
      .tuple(toolCall(names, params), fc.integer({ min: 0, max: 9 }), fc.nat())
      .map(([e, kind, n]) => (kind <= 1 ? damaged(JSON.stringify(e), kind, n) : Buffer.from(JSON.stringify(e))));
    await fc.assert(
      fc.asyncProperty(call, async (b) => run({ body: b, contentType: 'application/json' })),
      { numRuns: 600 },
    );
  }, 120_000);

  it('answers the extremes: over 1 MiB, nesting far past 64, a string just under the limit', async () => {
    const cases: Case[] = [
      { body: Buffer.alloc(MAX_BODY + 1, 0x20), contentType: 'application/json' },
      { body: Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"ping","params":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), contentType: 'application/json' },
      { body: Buffer.from(`${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`), contentType: 'application/json' },
      {
        body: Buffer.from(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 'big',
            method: 'tools/call',
            params: { name: 'list_articles', arguments: { search: 'x'.repeat(MAX_BODY - 200) } },
          }),
        ),
        contentType: 'application/json',
      },
      { body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 'big2', method: 'x'.repeat(MAX_BODY - 100) })), contentType: 'application/json' },
    ];
    for (const c of cases) await run(c);
  }, 60_000);

  it('is still alive and serving after all of it', async () => {
    expect(sent).toBeGreaterThanOrEqual(1_000);
    expect(server.child.exitCode).toBeNull();
    expect((await request(server.baseUrl).get('/healthz')).status).toBe(200);
    const ping = await rpc(server, tenant.key, '{"jsonrpc":"2.0","id":"last","method":"ping"}', { Accept: '' });
    expect(ping.body).toEqual({ jsonrpc: '2.0', id: 'last', result: {} });
    expect(server.output()).not.toMatch(/Internal error|"level":50/);
  });
});
