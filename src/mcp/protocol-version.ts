import { cleanCapabilities, isLogLevel } from '../protocol/client-capabilities.js';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import type { McpState, RequestClient } from './mcp-request.js';

/**
 * Every protocol-version decision lives here: which era a request speaks, which version, and (in the
 * modern era) the checks of its headers and `params._meta`, in the order MCP 2026-07-28 gives them.
 * {@link decideEra} runs once per request (EraGuard, before the session is looked up) and
 * {@link legacyVersion} once more for a legacy request (ProtocolVersionGuard, after it); everything
 * after them reads `req.mcp.era`, `.version` and `.client`, nothing re-parses headers or `_meta`.
 */
/**
 * The era a request speaks: `legacy` is 2025-03-26 … 2025-11-25 (initialize, sessions, server→client
 * requests on the call's stream); `modern` is 2026-07-28 (no initialize or sessions; every request
 * names its version and the client in `params._meta`, results carry `resultType`).
 */
export type Era = 'legacy' | 'modern';

export const SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type ProtocolVersion = (typeof SUPPORTED_VERSIONS)[number];
export const MODERN_VERSIONS = ['2026-07-28'] as const;
export type ModernVersion = (typeof MODERN_VERSIONS)[number];
/**
 * Every version this server speaks, newest first: `server/discover`'s `supportedVersions` and the
 * `data.supported` of an unsupported-version error (-32022) are this one list.
 */
export const ALL_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...SUPPORTED_VERSIONS];

export const LATEST_VERSION: ProtocolVersion = SUPPORTED_VERSIONS[0];
/** What a request after initialize without an `MCP-Protocol-Version` header is taken to speak. */
export const DEFAULT_HEADER_VERSION: ProtocolVersion = '2025-03-26';

/** The `_meta` keys of MCP 2026-07-28 requests and results. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** The methods whose target names itself in the `Mcp-Name` header, and the param it must equal. */
const NAMED: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export function isSupported(version: unknown): version is ProtocolVersion {
  return (SUPPORTED_VERSIONS as readonly unknown[]).includes(version);
}

export function isModern(version: unknown): version is ModernVersion {
  return (MODERN_VERSIONS as readonly unknown[]).includes(version);
}

/** `initialize`: echo the client's version when supported, else answer our latest. */
export function negotiate(requested: unknown): ProtocolVersion {
  return isSupported(requested) ? requested : LATEST_VERSION;
}

/**
 * The version a legacy request speaks: `initialize` negotiates it in its params (null here), every
 * other request names it in its `MCP-Protocol-Version` header.
 */
export function requestVersion(method: unknown, header: string | undefined): ProtocolVersion | null {
  return method === 'initialize' ? null : versionFromHeader(header);
}

/** The version a non-initialize legacy request speaks, from its header; an unsupported one is a 400. */
export function versionFromHeader(header: string | undefined): ProtocolVersion {
  if (header === undefined || header === '') return DEFAULT_HEADER_VERSION;
  if (!isSupported(header)) {
    throw new RpcError(RpcCode.InvalidRequest, `Unsupported MCP-Protocol-Version "${header}"; supported: ${ALL_VERSIONS.join(', ')}.`, 400);
  }
  return header;
}

type Headers = Record<string, string | string[] | undefined>;

/** A header's value, optional whitespace trimmed; the first of repeated ones. */
function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The `_meta` object of a message's params, if any. */
function metaOf(message: unknown): Record<string, unknown> | undefined {
  const params = isObject(message) ? message.params : undefined;
  const meta = isObject(params) ? params._meta : undefined;
  return isObject(meta) ? meta : undefined;
}

/**
 * The era of a request: modern when its `_meta` names a protocol version (any value: an unsupported one
 * is then answered -32022), or when its `MCP-Protocol-Version` header is a modern version; legacy
 * otherwise (no header, a 2025 one, or an unknown one without `_meta`, answered as before).
 */
export function eraOf(headers: Headers, message: unknown): Era {
  const meta = metaOf(message);
  if (meta && META.protocolVersion in meta) return 'modern';
  return isModern(header(headers, 'mcp-protocol-version')) ? 'modern' : 'legacy';
}

/** The era of a POST whose body was read (or could not be): its header alone when it is not JSON. */
function postEra(headers: Headers, state: McpState): Era {
  return state.parseError ? (isModern(header(headers, 'mcp-protocol-version')) ? 'modern' : 'legacy') : eraOf(headers, state.message);
}

/**
 * What a request names, read without checking it: its era, and in the modern era the client of its
 * `_meta` (when well-formed). For a request refused before {@link decideEra} runs (the rate limit),
 * so that its refusal speaks its era and its activity entry names its client.
 */
export function namedEra(httpMethod: string, headers: Headers, state: McpState): { era: Era; clientInfo: { name: string; version: string } | null } {
  if (httpMethod !== 'POST' || postEra(headers, state) === 'legacy') return { era: 'legacy', clientInfo: null };
  const info = metaOf(state.parseError ? undefined : state.message)?.[META.clientInfo];
  const wellFormed = isObject(info) && typeof info.name === 'string' && typeof info.version === 'string';
  return { era: 'modern', clientInfo: wellFormed ? clip(info as { name: string; version: string }) : null };
}

/**
 * Decides the era of a request and, for a modern one, checks it and fills its version and client from
 * `_meta` (MCP 2026-07-28 "Protocol Version" and "Standard headers"), in this order:
 *   1. no `Mcp-Session-Id` (a session belongs to the legacy era)  → 400, -32600
 *   2. `params._meta` with a string protocol version and a clientCapabilities object (clientInfo and
 *      logLevel optional, well-formed when present)                → 400, -32602
 *   3. the `MCP-Protocol-Version` header equals it                 → 400, -32020
 *   4. it is a version this server speaks in the modern era         → 400, -32022 {supported, requested}
 *   5. `Mcp-Method` equals the body's method                       → 400, -32020
 *   6. `Mcp-Name` equals the target of tools/call, prompts/get, resources/read, tasks/* (trimmed,
 *      `=?base64?…?=` decoded)                                      → 400, -32020
 * A non-POST request with a modern header is 405 (2026-07-28 has no GET stream and no session to
 * DELETE). A body that is not a JSON-RPC request object, and a notification or response, skip the
 * checks: the envelope pipe answers the former, the controller acknowledges the latter.
 */
export function decideEra(httpMethod: string, headers: Headers, state: McpState): void {
  if (httpMethod !== 'POST') {
    if (isModern(header(headers, 'mcp-protocol-version'))) {
      throw new RpcError(
        RpcCode.ServerError,
        `Method not allowed: MCP ${MODERN_VERSIONS[0]} has no ${httpMethod} on /mcp; POST each request.`,
        405,
        undefined,
        { Allow: 'POST' },
      );
    }
    state.era = 'legacy';
    return;
  }
  const message = state.message;
  const era = postEra(headers, state);
  state.era = era;
  if (era === 'legacy') return;
  if (headers['mcp-session-id'] !== undefined) {
    throw new RpcError(
      RpcCode.InvalidRequest,
      `Invalid request: Mcp-Session-Id is not part of MCP ${MODERN_VERSIONS[0]}, which has no sessions. Send ${MODERN_VERSIONS[0]} requests without it, or speak ${SUPPORTED_VERSIONS.join(', ')} in the session.`,
      400,
    );
  }
  if (state.parseError || !isObject(message) || typeof message.method !== 'string' || !('id' in message)) return;
  const method = message.method;
  const params = message.params;
  const meta = isObject(params) ? params._meta : undefined;
  const badMeta = (what: string) => new RpcError(RpcCode.InvalidParams, `Invalid params: ${what}`, 400);
  if (!isObject(params)) throw badMeta(`a ${MODERN_VERSIONS[0]} request carries params with _meta ("${META.protocolVersion}", "${META.clientCapabilities}").`);
  if (!isObject(meta)) throw badMeta(`params._meta must be an object with "${META.protocolVersion}" and "${META.clientCapabilities}".`);
  const version = meta[META.protocolVersion];
  if (typeof version !== 'string') throw badMeta(`params._meta["${META.protocolVersion}"] must be the protocol version (a string).`);
  const capabilities = meta[META.clientCapabilities];
  if (!isObject(capabilities)) throw badMeta(`params._meta["${META.clientCapabilities}"] must be the client's capabilities (an object; {} for none).`);
  const info = meta[META.clientInfo];
  if (info !== undefined && !(isObject(info) && typeof info.name === 'string' && typeof info.version === 'string')) {
    throw badMeta(`params._meta["${META.clientInfo}"], when sent, must be {"name": string, "version": string}.`);
  }
  const logLevel = meta[META.logLevel];
  if (logLevel !== undefined && !isLogLevel(logLevel)) throw badMeta(`params._meta["${META.logLevel}"], when sent, must be a log level (debug … emergency).`);

  const mismatch = (what: string) => new RpcError(RpcCode.HeaderMismatch, `Header mismatch: ${what}`, 400);
  const headerVersion = header(headers, 'mcp-protocol-version');
  if (headerVersion !== version) {
    throw mismatch(
      headerVersion === undefined
        ? `send the MCP-Protocol-Version header; it must equal params._meta["${META.protocolVersion}"] ("${version}").`
        : `the MCP-Protocol-Version header ("${headerVersion}") differs from params._meta["${META.protocolVersion}"] ("${version}").`,
    );
  }
  if (!isModern(version)) {
    throw new RpcError(
      RpcCode.UnsupportedVersion,
      `Unsupported protocol version "${version}"; supported: ${ALL_VERSIONS.join(', ')} (${SUPPORTED_VERSIONS.join(', ')} with initialize).`,
      400,
      { supported: [...ALL_VERSIONS], requested: version },
    );
  }
  const headerMethod = header(headers, 'mcp-method');
  if (headerMethod !== method) {
    throw mismatch(
      headerMethod === undefined
        ? `send the Mcp-Method header ("${method}").`
        : `the Mcp-Method header ("${headerMethod}") differs from the body's method ("${method}").`,
    );
  }
  const param = NAMED[method];
  const target = param ? params[param] : undefined;
  if (typeof target === 'string') {
    const name = decodeName(header(headers, 'mcp-name'));
    if (name !== target)
      throw mismatch(
        name === undefined
          ? `send the Mcp-Name header with params.${param} ("${target}").`
          : `the Mcp-Name header ("${name}") differs from params.${param} ("${target}").`,
      );
  }
  state.version = version;
  state.client = modernClient(capabilities, info as { name: string; version: string } | undefined, logLevel ?? null);
}

/** An `Mcp-Name` value: as sent, or decoded from the `=?base64?…?=` form non-ASCII names take. */
function decodeName(value: string | undefined): string | undefined {
  const m = value === undefined ? null : /^=\?base64\?(.*)\?=$/i.exec(value);
  return m ? Buffer.from(m[1], 'base64').toString('utf8') : value;
}

/** A modern request's client, from its `_meta` only (never a session or an earlier request). */
function modernClient(
  capabilities: Record<string, unknown>,
  info: { name: string; version: string } | undefined,
  logLevel: RequestClient['logLevel'],
): RequestClient {
  const cleaned = cleanCapabilities(capabilities);
  if (isObject(capabilities.extensions)) cleaned.extensions = capabilities.extensions;
  return { capabilities: cleaned, info: info ? clip(info) : null, logLevel };
}

/** A client's name and version, cut to the lengths kept. */
function clip(info: { name: string; version: string }): { name: string; version: string } {
  return { name: info.name.slice(0, 200), version: info.version.slice(0, 100) };
}
