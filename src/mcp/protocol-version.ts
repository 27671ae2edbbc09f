import { RpcCode, RpcError } from './json-rpc.js';

/**
 * Every protocol-version decision lives here. A later revision (2026-07-28: no initialize, no
 * sessions, `server/discover`, `Mcp-Method`/`Mcp-Name` headers) is added by listing it and giving
 * its differences a flag below, not by touching the pipeline.
 */
/**
 * The era a request speaks, decided once per request (ProtocolVersionGuard) and carried in its state:
 * `legacy` is 2025-03-26 … 2025-11-25 (initialize, sessions, server→client requests on the call's
 * stream); `modern` is 2026-07-28 (no initialize or sessions; every request names its version and the
 * client in `params._meta`). Nothing after the guard re-parses headers or `_meta`.
 */
export type Era = 'legacy' | 'modern';

export const SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type ProtocolVersion = (typeof SUPPORTED_VERSIONS)[number];

export const LATEST_VERSION: ProtocolVersion = SUPPORTED_VERSIONS[0];
/** What a request after initialize without an `MCP-Protocol-Version` header is taken to speak. */
export const DEFAULT_HEADER_VERSION: ProtocolVersion = '2025-03-26';

export function isSupported(version: unknown): version is ProtocolVersion {
  return (SUPPORTED_VERSIONS as readonly unknown[]).includes(version);
}

/** `initialize`: echo the client's version when supported, else answer our latest. */
export function negotiate(requested: unknown): ProtocolVersion {
  return isSupported(requested) ? requested : LATEST_VERSION;
}

/**
 * The version a request speaks: `initialize` negotiates it in its params (null here), every other
 * request names it in its `MCP-Protocol-Version` header.
 */
export function requestVersion(method: unknown, header: string | undefined): ProtocolVersion | null {
  return method === 'initialize' ? null : versionFromHeader(header);
}

/** The version a non-initialize request speaks, from its header; an unsupported one is a 400. */
export function versionFromHeader(header: string | undefined): ProtocolVersion {
  if (header === undefined || header === '') return DEFAULT_HEADER_VERSION;
  if (!isSupported(header)) {
    throw new RpcError(RpcCode.InvalidRequest, `Unsupported MCP-Protocol-Version "${header}"; supported: ${SUPPORTED_VERSIONS.join(', ')}.`, 400);
  }
  return header;
}
