import type { Response } from 'supertest';
import { admin } from '../support/fixtures.js';
import { withClient } from '../support/database.js';
import type { TestApp } from '../support/test-app.js';

// Sign-in through the pages, as a browser without script does it: read the form from the HTML, keep
// the cookies, post the form back.

/** The CSP every page sends (docs/oauth.md#what-every-oauth-endpoint-shares, with no extra form-action source). */
export const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'";

/** The cookies a response sets, by name: `{value, attributes}` (attributes lower-cased). */
export function setCookies(res: Response): Record<string, { value: string; attributes: string[] }> {
  const raw = res.headers['set-cookie'] as unknown as string[] | undefined;
  const out: Record<string, { value: string; attributes: string[] }> = {};
  for (const line of raw ?? []) {
    const [pair, ...attributes] = line.split(';').map((s) => s.trim());
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = { value: decodeURIComponent(pair.slice(eq + 1)), attributes: attributes.map((a) => a.toLowerCase()) };
  }
  return out;
}

/** The value of the hidden (or other) input `name` in a page, unescaped; undefined when absent. */
export function field(page: string, name: string): string | undefined {
  const input = page.match(new RegExp(`<input[^>]*name="${name}"[^>]*>`))?.[0];
  const value = input?.match(/value="([^"]*)"/)?.[1];
  return value === undefined
    ? input
      ? ''
      : undefined
    : value
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&#96;/g, '`')
        .replace(/&amp;/g, '&');
}

/** What a browser holds after opening the sign-in page: the pre-session cookie and the form's csrf. */
export interface OpenedPage {
  res: Response;
  /** The `Cookie` header to send back (the pre-session CSRF cookie). */
  cookie: string;
  csrf: string;
}

/** GET a sign-in page (`path` with its query) and read its form. */
export async function openSignIn(t: TestApp, path: string, cookie?: string, headers: Record<string, string> = {}): Promise<OpenedPage> {
  const req = t.http.get(path).set(headers);
  const res = await (cookie ? req.set('Cookie', cookie) : req);
  const pre = setCookies(res).rb_login_csrf;
  const csrf = field(res.text, 'csrf');
  if (!pre || !csrf) throw new Error(`GET ${path} did not answer a sign-in form (${res.status}): ${res.text.slice(0, 500)}`);
  return { res, cookie: `rb_login_csrf=${pre.value}`, csrf };
}

/** POST /oauth/login with the form's fields and the page's cookie, plus extra headers. */
export function postSignIn(t: TestApp, page: OpenedPage, form: Record<string, string>, headers: Record<string, string> = {}) {
  return t.http
    .post('/oauth/login')
    .type('form')
    .set({ Cookie: page.cookie, ...headers })
    .send({ csrf: page.csrf, ...form });
}

/** A login link for `userId` through the admin API. */
export function newLink(
  t: TestApp,
  userId: string,
  body: { expires_in?: number; return_to?: string } = {},
): Promise<{ url: string; token: string; expires_at: string }> {
  return admin(t, 'post', `/admin/v1/users/${userId}/login-links`, body, 201);
}

/** The path and query of a link (what a browser GETs on this server). */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/** Opens a link's page and presses Sign in: the POST's answer, and the rb_session cookie it set (if any). */
export async function signInWithLink(t: TestApp, url: string): Promise<{ res: Response; session?: string }> {
  const page = await openSignIn(t, pathOf(url));
  const res = await postSignIn(t, page, {
    token: field(page.res.text, 'token')!,
    ...(field(page.res.text, 'return_to') ? { return_to: field(page.res.text, 'return_to')! } : {}),
  });
  const session = setCookies(res).rb_session?.value;
  return { res, session: session ? `rb_session=${session}` : undefined };
}

/** Runs SQL on the app's database. */
export function sqlOn(t: TestApp, text: string, params: unknown[] = []) {
  return withClient(t.config.databaseUrl!, (c) => c.query(text, params));
}

/** The number of live browser sessions of a person. */
export async function sessionsOf(t: TestApp, userId: string): Promise<number> {
  const { rows } = await sqlOn(t, `SELECT count(*)::int AS n FROM browser_sessions WHERE user_id = $1 AND expires_at > now()`, [userId]);
  return rows[0].n as number;
}

/** The row of a login link, found by the hash of its token. */
export async function linkRow(t: TestApp, token: string): Promise<{ used_at: Date | null; expires_at: Date; return_to: string | null } | undefined> {
  const { rows } = await sqlOn(t, `SELECT used_at, expires_at, return_to FROM login_links WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, [token]);
  return rows[0];
}

/** Makes a login link expired (a second ago). */
export async function expireLink(t: TestApp, token: string): Promise<void> {
  await sqlOn(t, `UPDATE login_links SET expires_at = now() - interval '1 second' WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, [token]);
}
