/** Where a sign-in goes when it names nowhere (or nowhere safe). */
export const DEFAULT_RETURN_TO = '/console/';
/** The longest `return_to` kept: an authorize URL with its query fits. */
export const MAX_RETURN_TO_LENGTH = 4096;

// A control character or a backslash: URL parsers drop tabs and newlines and read `\` as `/`, so
// `/\tevil.test` or `/\evil.test` would become `//evil.test`, another host.
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

// A path that starts `//` or `/\` is a network-path reference: a browser reads `//evil.test/x` as
// another host. Checked on the normalised path too, since `/.//evil.test` or `/x/..//evil.test`
// (dot segments, `%2e` included) become `//evil.test` once their dot segments are removed.
const NETWORK_PATH = /^\/[/\\]/;

/**
 * `value` as a normalised path and query on this server (`/oauth/authorize?client_id=…`), or null
 * when it is anything else: an absolute URL, `//host`, `/\host`, a relative path, a control
 * character, or a path that normalises to `//host`. The fragment is dropped.
 */
export function safeReturnTo(value: unknown, publicUrl: string): string | null {
  if (typeof value !== 'string' || !value.startsWith('/') || NETWORK_PATH.test(value) || value.length > MAX_RETURN_TO_LENGTH || UNSAFE.test(value)) {
    return null;
  }
  const base = new URL(publicUrl);
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return null;
  }
  const path = url.pathname + url.search;
  return url.origin === base.origin && !NETWORK_PATH.test(path) ? path : null;
}

/** Where to go after signing in: `value` when it is a path on this server, else the console. */
export function returnToOrDefault(value: unknown, publicUrl: string): string {
  return safeReturnTo(value, publicUrl) ?? DEFAULT_RETURN_TO;
}

/** A login link's token: `rbl_` and 43 base64url characters (256 random bits). */
export const LOGIN_TOKEN = /rbl_[A-Za-z0-9_-]{43}/;

/**
 * What a person pasted into the sign-in field: the whole link (`…/oauth/login?token=rbl_…&return_to=…`)
 * or just its token. Answers the token (if one is there) and the link's `return_to` (if any).
 */
export function parsePastedLink(input: unknown): { token: string | null; returnTo: string | null } {
  if (typeof input !== 'string') return { token: null, returnTo: null };
  const text = input.trim();
  if (!text || text.length > 8192) return { token: null, returnTo: null };
  let returnTo: string | null = null;
  let token: string | null = null;
  if (text.includes('?')) {
    try {
      const params = new URL(text, 'http://link.invalid').searchParams;
      token = params.get('token');
      returnTo = params.get('return_to');
    } catch {
      // Not a URL: look for a token in the text below.
    }
  }
  token = (token ?? text).match(LOGIN_TOKEN)?.[0] ?? (token || text);
  return { token: token.length <= 200 ? token : null, returnTo };
}
