/** MCP log levels (RFC 5424 severities), least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/** Whether a message at `level` passes a session's chosen `threshold` (none chosen: nothing passes). */
export function logPasses(level: LogLevel, threshold: LogLevel | null): boolean {
  return threshold !== null && LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

/**
 * The client capabilities a session keeps (MCP 2025-11-25 `ClientCapabilities`, with the `extensions`
 * map the extensions such as MCP Apps are declared in); any other key is dropped.
 */
const KNOWN = ['roots', 'sampling', 'elicitation', 'tasks', 'experimental', 'extensions'] as const;
/** The most JSON one capability may take; a larger one is kept as `{}` (declared, details dropped). */
const MAX_CAPABILITY_JSON = 2_048;

/** What `initialize`'s `capabilities` becomes on the session: known keys whose values are objects, each bounded. */
export function cleanCapabilities(raw: unknown): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const key of KNOWN) {
    const value = (raw as Record<string, unknown>)[key];
    if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
    out[key] = JSON.stringify(value).length <= MAX_CAPABILITY_JSON ? (value as Record<string, unknown>) : {};
  }
  return out;
}

/**
 * Whether the client takes form-mode `elicitation/create`: an `elicitation` capability that is empty
 * (form only, for backwards compatibility) or names `form`.
 */
export function canElicitForm(capabilities: Record<string, unknown>): boolean {
  const elicitation = capabilities.elicitation as Record<string, unknown> | undefined;
  if (!elicitation) return false;
  const modes = Object.keys(elicitation);
  return modes.length === 0 || 'form' in elicitation;
}

/** What a server may ask a client in the middle of a request. */
export type InputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/** Whether this client declared what `method` needs, in this request (2026-07-28) or its session (2025). */
export function declares(capabilities: Record<string, unknown>, method: InputMethod): boolean {
  if (method === 'elicitation/create') return canElicitForm(capabilities);
  const value = capabilities[method === 'sampling/createMessage' ? 'sampling' : 'roots'];
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
