import type { Response } from 'express';
import type { LoginMethod } from '../config/config.js';
import type { User } from '../users/user.js';
import type { LinkDescription } from '../login-links/login-links.repository.js';
import { html, type Html } from '../web/html.js';
import { sendPage } from '../web/page.js';

// The sign-in pages (docs/oauth.md#signing-in): rendered with src/web, no script, every value escaped.

/** What the sign-in page offers. */
export interface SignInPageModel {
  methods: LoginMethod[];
  csrf: string;
  /** A link's token: the page shows one Sign in button for it; without one, a field to paste the link into. */
  token?: string | null;
  /** Whose sign-in the token is (and who made it where), when it would sign in. */
  link?: LinkDescription | null;
  returnTo?: string | null;
  /** The sentence saying why the last attempt failed. */
  error?: string | null;
  /** Who is signed in already, if anyone (a link then switches to its own person). */
  signedIn?: User | null;
  status?: number;
  /** Offer "Sign in with your company": a work-email field that leads to the person's account's identity provider. */
  company?: boolean;
  /** The work email typed last, to show again. */
  companyEmail?: string;
}

const display = (user: User) => (user.name ? `${user.name} (${user.email})` : user.email);

function errorBlock(error: string | null | undefined): Html | null {
  return error ? html`<p class="error" role="alert">${error}</p>` : null;
}

/** Where the OIDC button leads, keeping where to return. */
function oidcStart(returnTo: string | null | undefined): string {
  return returnTo ? `/oauth/login/oidc?${new URLSearchParams({ return_to: returnTo })}` : '/oauth/login/oidc';
}

/** The work-email form: the person's account's identity provider signs them in (POST /oauth/login/company). */
function companyForm(csrf: string, returnTo: string | null | undefined, email: string | undefined, primary: boolean): Html {
  return html`<form method="post" action="/oauth/login/company" class="panel">
<h2>Sign in with your company</h2>
<label for="company-email">Work email</label>
<input type="email" id="company-email" name="email" autocomplete="email" spellcheck="false" required maxlength="320" value="${email ?? ''}" placeholder="name@company.com">
<p class="muted">If your account signs its people in through its identity provider (Okta, Microsoft Entra ID…), you go there next.</p>
<input type="hidden" name="csrf" value="${csrf}">${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : null}
<div class="actions"><button type="submit"${primary ? null : html` class="secondary"`}>Continue</button></div>
</form>`;
}

/** The sign-in page of the enabled methods: the link's button or field, the identity provider's button, the work-email form. */
export function signInPage(res: Response, model: SignInPageModel): void {
  const { methods, csrf, token, returnTo, error, signedIn, link: described } = model;
  const link = methods.includes('link');
  const oidc = methods.includes('oidc');
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}">${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : null}`;
  let linkForm: Html | null = null;
  if (link && token) {
    const maker = described?.made_by
      ? html` It was made by ${described.made_by}${described.account_name ? html` in the account “${described.account_name}”` : null}.`
      : null;
    linkForm = html`<form method="post" action="/oauth/login" class="panel">
${described ? html`<p>This link signs in <strong>${described.email}</strong>.${maker} If you are not ${described.email}, do not use it.</p>` : null}
<p>This sign-in link works once. Press the button to sign in.</p>
<input type="hidden" name="token" value="${token}">${hidden}
<div class="actions"><button type="submit">${described ? `Sign in as ${described.email}` : 'Sign in'}</button></div>
</form>`;
  } else if (link) {
    linkForm = html`<form method="post" action="/oauth/login" class="panel">
<label for="token">Your sign-in link</label>
<input type="text" id="token" name="token" autocomplete="off" spellcheck="false" required placeholder="https://…/oauth/login?token=rbl_…">
<p class="muted">Paste the whole link your operator gave you, or just its token (it starts with <code>rbl_</code>).</p>${hidden}
<div class="actions"><button type="submit">Sign in</button></div>
</form>`;
  }
  const oidcButton = oidc
    ? html`<div class="panel"><p>Sign in with your company account.</p><div class="actions"><a class="button${link ? ' secondary' : ''}" href="${oidcStart(returnTo)}">Sign in with your identity provider</a></div></div>`
    : null;
  sendPage(res, {
    title: 'Sign in',
    status: model.status ?? 200,
    signedInAs: signedIn ? signedIn.email : null,
    body: html`<h1>Sign in to Reblog</h1>
${errorBlock(error)}
${signedIn ? html`<p class="notice">You are signed in as ${display(signedIn)}. Signing in again switches to the person the link names.</p>` : null}
${linkForm}
${oidcButton}
${model.company ? companyForm(csrf, returnTo, model.companyEmail, !link && !oidc) : null}
${!link && !oidc ? html`<p>Sign in through your company's gateway.</p>` : null}`,
  });
}

/** Several of the person's accounts sign in through their own identity provider: one button each. */
export function companyChoicePage(
  res: Response,
  model: { choices: { identity_provider_id: string; account_name: string; issuer: string }[]; email: string; csrf: string; returnTo: string | null },
): void {
  const { choices, email, csrf, returnTo } = model;
  sendPage(res, {
    title: 'Choose your account',
    body: html`<h1>Choose your account</h1>
<p>Several accounts sign you in through their identity provider. Which one do you sign in to?</p>
<ul class="choices">${choices.map(
      (c) => html`<li><form method="post" action="/oauth/login/company">
<input type="hidden" name="email" value="${email}"><input type="hidden" name="provider" value="${c.identity_provider_id}"><input type="hidden" name="csrf" value="${csrf}">${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : null}
<button type="submit" class="secondary">${c.account_name}</button> <span class="muted">through ${hostOf(c.issuer)}</span>
</form></li>`,
    )}</ul>
<p><a href="/oauth/login">Back to sign-in</a></p>`,
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** A signed-in person opening the sign-in page: who they are, where to go on, and a Sign out button. */
export function signedInPage(res: Response, model: { user: User; csrf: string; returnTo?: string | null }): void {
  const { user, csrf, returnTo } = model;
  sendPage(res, {
    title: 'Signed in',
    signedInAs: user.email,
    body: html`<h1>You are signed in</h1>
<p>You are signed in as <strong>${display(user)}</strong>.</p>
<form method="post" action="/oauth/logout">
<input type="hidden" name="csrf" value="${csrf}">
<div class="actions">${returnTo ? html`<a class="button" href="${returnTo}">Continue</a>` : null}<button type="submit" class="secondary">Sign out</button></div>
</form>`,
  });
}

/** After signing out. */
export function signedOutPage(res: Response, methods: LoginMethod[]): void {
  const proxyOnly = methods.length === 1 && methods[0] === 'proxy';
  sendPage(res, {
    title: 'Signed out',
    body: html`<h1>You are signed out</h1>
${proxyOnly ? html`<p>Your company's gateway may sign you in again on your next visit.</p>` : html`<p><a href="/oauth/login">Sign in again</a></p>`}`,
  });
}

/** A person the server does not know: 403, and no session. */
export function noAccessPage(res: Response, email: string): void {
  sendPage(res, {
    title: 'No access',
    status: 403,
    body: html`<h1>No access</h1>
<p class="error" role="alert">Nobody with the email <strong>${email}</strong> may use this Reblog server: ask your operator to add you.</p>`,
  });
}

/** A refusal that the person cannot fix by trying again here: a disabled account, an unverified email, an identity mismatch. */
export function refusedPage(res: Response, model: { title: string; message: string; status: number; again?: boolean }): void {
  sendPage(res, {
    title: model.title,
    status: model.status,
    body: html`<h1>${model.title}</h1>
<p class="error" role="alert">${model.message}</p>
${model.again ? html`<p><a href="/oauth/login">Back to sign-in</a></p>` : null}`,
  });
}

/**
 * `proxy` is the only method and the request did not come through the gateway signed in: 401. While
 * some account signs its people in through its own identity provider, the work-email form too.
 */
export function gatewayPage(res: Response, company?: { csrf: string; returnTo: string | null } | null): void {
  sendPage(res, {
    title: 'Sign in through your gateway',
    status: 401,
    body: html`<h1>Sign in through your company's gateway</h1>
<p>This server signs people in through their company's gateway (single sign-on). Open this page through the gateway's address and sign in there.</p>
${company ? companyForm(company.csrf, company.returnTo, undefined, false) : null}`,
  });
}

/** Over the per-IP limit of sign-in attempts: 429 with Retry-After. */
export function tooManyPage(res: Response, retryAfterS: number): void {
  res.set('Retry-After', String(retryAfterS));
  sendPage(res, {
    title: 'Too many attempts',
    status: 429,
    body: html`<h1>Too many sign-in attempts</h1>
<p class="error" role="alert">Too many sign-in attempts came from your address. Try again in ${retryAfterS} seconds.</p>`,
  });
}
