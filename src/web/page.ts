import type { Response } from 'express';
import { html, type Html } from './html.js';

/** Where the stylesheet is served (by WebAssetsController); `style-src 'self'` allows it. */
export const STYLESHEET_PATH = '/assets/reblog.css';

export interface PageOptions {
  title: string;
  body: Html;
  /** The signed-in person, shown in the header. */
  signedInAs?: string | null;
  /** Extra `form-action` sources beyond 'self' (the consent page: the redirect's origin or scheme). */
  formAction?: string[];
  status?: number;
  wide?: boolean;
}

/** The Content-Security-Policy of every page: no script at all, styles and images from this server only. */
export function contentSecurityPolicy(formAction: string[] = []): string {
  return [`default-src 'none'`, `style-src 'self'`, `img-src 'self'`, `form-action ${["'self'", ...formAction].join(' ')}`, `frame-ancestors 'none'`].join('; ');
}

/** Renders a whole page with the security headers of spec/oauth.md and sends it. */
export function sendPage(res: Response, { title, body, signedInAs, formAction, status = 200, wide }: PageOptions): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': contentSecurityPolicy(formAction),
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
</head>
<body>
<header class="site"><a class="brand" href="/console/">Reblog</a>${signedInAs ? html`<span class="who">Signed in as ${signedInAs}</span>` : null}</header>
<main${wide ? html` class="wide"` : null}>
${body}
</main>
</body>
</html>
`.value,
    );
}
