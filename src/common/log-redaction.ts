/**
 * What never reaches a log line: credentials in headers (`Authorization`, `Cookie`, `Set-Cookie`,
 * any `*token*`, `*secret*`, `*password*` or `*api-key*` name), in query parameters and in logged
 * objects, and anything
 * shaped like one of our secrets (`rbk_`, `rbg_`, `rba_`, and the refresh tokens `rbr_` and login links `rbl_`) wherever it stands in a string.
 *
 * Applied by the pino serializers of the request and the response (nestjs-pino binds the request to
 * every line logged while it is served) and to the object of every log call.
 */
const SECRET_NAME = /authorization|cookie|token|secret|password|passwd|api[-_]?key/i;
const SECRET_VALUE = /\b(rbk|rbg|rba|rbr|rbl)_[A-Za-z0-9_-]{8,}/g;
export const REDACTED = '[redacted]';

/** A copy of `value` with every secret replaced by {@link REDACTED}; errors are left to pino's serializer. */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return value.replace(SECRET_VALUE, REDACTED) as T;
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => redactSecrets(item, depth + 1)) as T;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = SECRET_NAME.test(key) ? REDACTED : redactSecrets(item, depth + 1);
  return copy as T;
}

/** `url` with the values of credential-like query parameters (`?access_token=…`) replaced. */
export function redactUrl(url: string): string {
  return redactSecrets(url).replace(/([?&])([^=&#]*)=([^&#]*)/g, (param: string, sep: string, name: string) =>
    SECRET_NAME.test(name) ? `${sep}${name}=${REDACTED}` : param,
  );
}

/** pino options that apply {@link redactSecrets} to the request, the response and every logged object. */
export const redactingLogOptions = {
  serializers: {
    req: (req: { headers?: unknown; url?: unknown; query?: unknown }) => ({
      ...req,
      ...(typeof req.url === 'string' ? { url: redactUrl(req.url) } : {}),
      query: redactSecrets(req.query),
      headers: redactSecrets(req.headers),
    }),
    res: (res: { headers?: unknown }) => ({ ...res, headers: redactSecrets(res.headers) }),
  },
  formatters: { log: (object: Record<string, unknown>) => redactSecrets(object) },
};
