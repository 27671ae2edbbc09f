import { RpcError } from '../protocol/json-rpc.js';
import type { McpState } from './mcp-request.js';
import { decorateModern } from './modern-result.js';
import { ALL_VERSIONS, decideEra, eraOf } from './protocol-version.js';

const V = '2026-07-28';
const META = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra,
});
const HEADERS = (method: string, extra: Record<string, string | undefined> = {}) => ({ 'mcp-protocol-version': V, 'mcp-method': method, ...extra });

function state(message: unknown): McpState {
  return { startedAt: 0, id: null, message };
}

function refusal(run: () => void): { code: number; status: number; data: unknown } {
  try {
    run();
  } catch (err) {
    if (err instanceof RpcError) return { code: err.code, status: err.httpStatus, data: err.data };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('the era of a request', () => {
  it('is modern when _meta names a version (any) or the header is 2026-07-28; legacy otherwise', () => {
    expect(eraOf({}, { method: 'x', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 'v9' } } })).toBe('modern');
    expect(eraOf({ 'mcp-protocol-version': V }, { method: 'x', params: {} })).toBe('modern');
    expect(eraOf({ 'mcp-protocol-version': ` ${V} ` }, { method: 'x' })).toBe('modern');
    expect(eraOf({ 'mcp-protocol-version': '2025-11-25' }, { method: 'x', params: { _meta: { progressToken: 1 } } })).toBe('legacy');
    expect(eraOf({ 'mcp-protocol-version': '1999-01-01' }, { method: 'x' })).toBe('legacy');
    expect(eraOf({}, { method: 'initialize', params: {} })).toBe('legacy');
  });

  it("checks a modern request in the revision's order: session, _meta, header version, supported, Mcp-Method, Mcp-Name", () => {
    const body = (meta: unknown, method = 'tools/call', params: Record<string, unknown> = { name: 'a' }) => ({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: meta },
    });
    // Everything wrong at once: the session is refused first.
    const all = { 'mcp-session-id': 's', 'mcp-protocol-version': 'v1', 'mcp-method': 'x' };
    expect(refusal(() => decideEra('POST', all, state(body({ 'io.modelcontextprotocol/protocolVersion': 'v1' })))).code).toBe(-32600);
    expect(
      refusal(() => decideEra('POST', { ...all, 'mcp-session-id': undefined }, state(body({ 'io.modelcontextprotocol/protocolVersion': 'v1' })))).code,
    ).toBe(-32602);
    expect(
      refusal(() => decideEra('POST', { ...all, 'mcp-session-id': undefined }, state(body(META({ 'io.modelcontextprotocol/protocolVersion': 'v2' }))))),
    ).toMatchObject({ code: -32020, status: 400 });
    const unsupported = refusal(() =>
      decideEra('POST', { ...all, 'mcp-session-id': undefined }, state(body(META({ 'io.modelcontextprotocol/protocolVersion': 'v1' })))),
    );
    expect(unsupported).toEqual({ code: -32022, status: 400, data: { supported: [...ALL_VERSIONS], requested: 'v1' } });
    expect(refusal(() => decideEra('POST', HEADERS('tools/list'), state(body(META()))))).toMatchObject({ code: -32020, status: 400 });
    expect(refusal(() => decideEra('POST', HEADERS('tools/call', { 'mcp-name': 'b' }), state(body(META()))))).toMatchObject({ code: -32020, status: 400 });
  });

  it('fills the version and the client from _meta only', () => {
    const s = state({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'é',
        _meta: META({
          'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { sampling: {}, extensions: { x: {} }, bogus: 1 },
          'io.modelcontextprotocol/logLevel': 'warning',
        }),
      },
    });
    decideEra('POST', HEADERS('tools/call', { 'mcp-name': `=?base64?${Buffer.from('é').toString('base64')}?=` }), s);
    expect(s).toMatchObject({
      era: 'modern',
      version: V,
      client: { capabilities: { sampling: {}, extensions: { x: {} } }, info: { name: 'c', version: '1' }, logLevel: 'warning' },
    });
    expect(s.client!.capabilities).not.toHaveProperty('bogus');
  });

  it('leaves notifications, responses and unparseable bodies to the controller and the envelope; refuses GET and DELETE with a modern header', () => {
    const note = state({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} });
    decideEra('POST', { 'mcp-protocol-version': V }, note);
    expect(note.era).toBe('modern');
    const broken: McpState = { ...state(undefined), parseError: { code: -32700, message: 'x', status: 400 } };
    decideEra('POST', { 'mcp-protocol-version': V }, broken);
    expect(broken.era).toBe('modern');
    expect(refusal(() => decideEra('GET', { 'mcp-protocol-version': V }, state(undefined)))).toMatchObject({ status: 405 });
    expect(refusal(() => decideEra('DELETE', { 'mcp-protocol-version': V }, state(undefined)))).toMatchObject({ status: 405 });
    const legacyDelete = state(undefined);
    decideEra('DELETE', { 'mcp-protocol-version': '2025-11-25' }, legacyDelete);
    expect(legacyDelete.era).toBe('legacy');
  });
});

describe('decorateModern', () => {
  const server = { name: 'reblog-mcp', version: '1.0.0' };
  it("adds resultType, the caching hints of the six cacheable results only, and serverInfo next to the handler's _meta", () => {
    expect(JSON.parse(decorateModern('tools/list', '{"tools":[]}', server))).toEqual({
      resultType: 'complete',
      tools: [],
      ttlMs: 60_000,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': server },
    });
    expect(decorateModern('tools/call', { content: [], _meta: { k: 1 } }, server)).toEqual({
      resultType: 'complete',
      content: [],
      _meta: { k: 1, 'io.modelcontextprotocol/serverInfo': server },
    });
    expect(decorateModern('resources/read', { contents: [] }, server)).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  });

  it('writes the fields around a serialised result without parsing it: the same JSON, in the same order, as from the object', () => {
    const catalogue = '{"tools":[{"name":"list_projects","inputSchema":{"type":"object","properties":{}},"_meta":{"k":1}}]}';
    const text = decorateModern('tools/list', catalogue, server);
    expect(text).toBe(JSON.stringify(decorateModern('tools/list', JSON.parse(catalogue), server)));
    expect(JSON.parse(decorateModern('prompts/list', '{}', server))).toEqual({
      resultType: 'complete',
      ttlMs: 60_000,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': server },
    });
  });

  it('keeps a result type the handler chose (input_required), without caching hints', () => {
    const out = decorateModern('resources/read', { resultType: 'input_required', inputRequests: {} }, server);
    expect(out.resultType).toBe('input_required');
    expect(out).not.toHaveProperty('ttlMs');
  });
});
