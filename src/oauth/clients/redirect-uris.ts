/** Hosts a native app's `http` redirect may name (RFC 8252 §7.3); `localhost` and `127.0.0.1` stay distinct. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Schemes that are not a private-use scheme of an app (RFC 8252 §7.1): they run code, read files or reach other servers. */
const REFUSED_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'blob:',
  'about:',
  'filesystem:',
  'view-source:',
  'ftp:',
  'ws:',
  'wss:',
  'mailto:',
  'tel:',
  'sms:',
  'chrome:',
  'intent:',
]);
export const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2_000;

/**
 * Why `uri` may not be a redirect URI, or null when it may (docs/oauth.md#clients): https without
 * a fragment or userinfo; http only on a loopback host; or a private-use scheme of a native app
 * (`cursor://…`, `vscode://…`, `com.example.app:/cb`).
 */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || !uri) return 'a redirect URI must be a non-empty string';
  if (uri.length > MAX_URI_LENGTH) return `a redirect URI is at most ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `"${uri}" is not an absolute URI`;
  }
  if (uri.includes('#')) return `"${uri}" has a fragment (#), which a redirect URI may not have`;
  // `new URL` keeps userinfo for special schemes only: look at the authority as written too.
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(uri)) return `"${uri}" carries a user name or password`;
  if (/\s/.test(uri)) return `"${uri}" contains white space`;
  if (url.protocol === 'https:') return url.hostname ? null : `"${uri}" names no host`;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? null : `"${uri}" is http on a host that is not localhost, 127.0.0.1 or [::1]: use https`;
  }
  if (REFUSED_SCHEMES.has(url.protocol)) return `the ${url.protocol} scheme is not allowed in a redirect URI`;
  return null;
}

/** Whether a (valid) redirect URI is http on a loopback host: a native app on the person's own computer. */
export function isLoopbackRedirect(uri: string): boolean {
  const url = new URL(uri);
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** Whether a (valid) redirect URI uses a private-use scheme (an app, not a web site). */
export function isPrivateUseRedirect(uri: string): boolean {
  const { protocol } = new URL(uri);
  return protocol !== 'https:' && protocol !== 'http:';
}

/**
 * Whether `requested` is one of the registered redirect URIs: exactly, or for a loopback URI on any
 * port (RFC 8252 §7.3), the scheme, host (as written: `localhost` is not `127.0.0.1`), path and
 * query matching.
 */
export function redirectUriRegistered(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  if (redirectUriProblem(requested) !== null || !isLoopbackRedirect(requested)) return false;
  const asked = new URL(requested);
  return registered.some((candidate) => {
    if (redirectUriProblem(candidate) !== null || !isLoopbackRedirect(candidate)) return false;
    const known = new URL(candidate);
    return known.hostname === asked.hostname && known.pathname === asked.pathname && known.search === asked.search;
  });
}

/** The CSP `form-action` source that lets the consent form's redirect reach `uri`: its origin, or its scheme for an app. */
export function formActionSource(uri: string): string {
  const url = new URL(uri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol;
}

/** What the consent page shows of where the code goes: the host, or the scheme and host of an app. */
export function redirectDisplay(uri: string): string {
  const url = new URL(uri);
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.host;
  return url.host ? `${url.protocol}//${url.host}` : url.protocol;
}
