import type { Response } from 'express';
import { html, type Html } from './html.js';

/** Where the stylesheet is served (by WebAssetsController); `style-src 'self'` allows it. */
export const STYLESHEET_PATH = '/assets/reblog.css';
/** The console's one progressive-enhancement script (local times, copy buttons), served by WebAssetsController. */
export const CONSOLE_SCRIPT_PATH = '/assets/console.js';

export interface PageOptions {
  title: string;
  body: Html;
  /** The signed-in person, shown in the header. */
  signedInAs?: string | null;
  /** Extra `form-action` sources beyond 'self' (the consent page: the redirect's origin or scheme). */
  formAction?: string[];
  status?: number;
  wide?: boolean;
  /**
   * `oauth` (default): the sign-in and consent pages' policy (docs/oauth.md#what-every-oauth-endpoint-shares), no script at all.
   * `console`: the owners' console, `default-src 'self'` (docs/console.md#rules) and its one script.
   */
  policy?: 'oauth' | 'console';
  /** A navigation bar under the header (the console's sections). */
  nav?: Html;
}

/** The Content-Security-Policy of every page: no script at all, styles and images from this server only. */
export function contentSecurityPolicy(formAction: string[] = []): string {
  return [`default-src 'none'`, `style-src 'self'`, `img-src 'self'`, `form-action ${["'self'", ...formAction].join(' ')}`, `frame-ancestors 'none'`].join(
    '; ',
  );
}

/**
 * The console's policy (docs/console.md#rules): everything from this server only, no inline script or
 * style (no 'unsafe-inline' anywhere), forms post here only, never framed.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  `default-src 'self'`,
  `base-uri 'none'`,
  `object-src 'none'`,
  `form-action 'self'`,
  `frame-ancestors 'none'`,
].join('; ');

/** Renders a whole page with the security headers of docs/oauth.md#what-every-oauth-endpoint-shares (or the console's policy) and sends it. */
export function sendPage(res: Response, { title, body, signedInAs, formAction, status = 200, wide, policy = 'oauth', nav }: PageOptions): void {
  const isConsole = policy === 'console';
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': isConsole ? CONSOLE_CONTENT_SECURITY_POLICY : contentSecurityPolicy(formAction),
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    })
    .send(
      html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Reblog</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${isConsole ? html`<script src="${CONSOLE_SCRIPT_PATH}" defer></script>` : null}
</head>
<body>
<header class="site"><a class="brand" href="/console/">Reblog</a>${signedInAs ? html`<span class="who">Signed in as ${signedInAs}</span>` : null}</header>
${nav ?? null}
<main${wide ? html` class="wide"` : null}>
${body}
</main>
</body>
</html>
`.value,
    );
}
