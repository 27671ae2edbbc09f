import { META } from './protocol-version.js';

/**
 * The caching hints of MCP 2026-07-28 (SEP-2549) on the results that take them, and only those.
 * Everything listed or read is per credential (the catalogue, the prompts, the articles), so the scope
 * is `private` throughout. Lists are good for a minute (2026-07-28 has no list_changed delivery here
 * yet), a resource is read afresh each time (articles change), discovery holds for an hour.
 */
export const CACHE_HINTS: Readonly<Record<string, { ttlMs: number; cacheScope: 'private' | 'public' }>> = {
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'private' },
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
  'prompts/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
};

/**
 * A modern-era result as MCP 2026-07-28 shapes it, in one step for every method: `resultType`
 * (`complete` unless the handler chose one, e.g. `input_required`), the caching hints where
 * {@link CACHE_HINTS} has them, and the server's identity in `_meta`. A legacy result never passes here.
 * `result` may be JSON text already serialised: the cached catalogue, an object with neither
 * `resultType` nor `_meta` at its top. The fields are then written around that text, which is not
 * parsed again, and the answer is text too.
 */
export function decorateModern(method: string, result: string, serverInfo: { name: string; version: string }): string;
export function decorateModern(method: string, result: object, serverInfo: { name: string; version: string }): Record<string, unknown>;
export function decorateModern(method: string, result: unknown, serverInfo: { name: string; version: string }): Record<string, unknown> | string;
export function decorateModern(method: string, result: unknown, serverInfo: { name: string; version: string }): Record<string, unknown> | string {
  if (typeof result === 'string') {
    const head = JSON.stringify({ resultType: 'complete', ...CACHE_HINTS[method] }).slice(0, -1);
    const body = result.slice(1, -1);
    return `${head}${body ? ',' + body : ''},"_meta":${JSON.stringify({ [META.serverInfo]: serverInfo })}}`;
  }
  const value = result as Record<string, unknown>;
  const meta = value._meta !== null && typeof value._meta === 'object' && !Array.isArray(value._meta) ? (value._meta as Record<string, unknown>) : {};
  const hints = value.resultType === undefined || value.resultType === 'complete' ? CACHE_HINTS[method] : undefined;
  return { resultType: 'complete', ...hints, ...value, _meta: { ...meta, [META.serverInfo]: serverInfo } };
}
