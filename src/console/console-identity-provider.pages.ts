import type { Response } from 'express';
import type { IdentityProviderView } from '../identity-providers/identity-provider.js';
import { html, type Html } from '../web/html.js';
import { accountPage, accountPath, time, type Frame } from './console.pages.js';
import type { IdentityProviderForm, IdentityProviderPageData, IdentityProviderProblem } from './console-identity-provider.service.js';

// The Identity provider page (owners): the account's providers, each with its change and remove
// forms, a form to register one, and the values the owner copies into the provider's settings.
// Every form posts to its own path and comes back here (POST-redirect-GET), or with the page again
// and the sentence when it is refused. The client secret is write-only: never put into the page.

export const identityProviderPath = (accountId: string, rest = ''): string => accountPath(accountId, `identity-provider${rest ? `/${rest}` : ''}`);

const NOTICES: Record<string, string> = {
  created: 'The identity provider is registered.',
  updated: 'The identity provider is saved.',
  removed: 'The identity provider is removed: nobody signs in through it any more, and the ID-JAGs it signs are refused.',
};

const CLAIMS: Record<string, string> = {
  email: 'their verified email',
  sub: 'their subject (sub), bound to them on their first sign-in',
};
const UNKNOWN: Record<string, string> = {
  refuse: 'refused',
  add: 'added as members, with no project role',
};

const option = (value: string, label: string, chosen: string) => html`<option value="${value}"${value === chosen ? html` selected` : null}>${label}</option>`;

/** The fields shared by the register and change forms; `prefix` keeps each form's ids apart. */
function fields(prefix: string, form: IdentityProviderForm, secretSet: boolean | null): Html {
  return html`<label for="${prefix}-issuer">Issuer</label>
<input type="url" id="${prefix}-issuer" name="issuer" required maxlength="2000" spellcheck="false" value="${form.issuer}" placeholder="https://company.okta.com">
<label for="${prefix}-claim">Name people by</label>
<select id="${prefix}-claim" name="person_claim">${option('email', 'email: their verified email', form.person_claim)}${option('sub', 'sub: their subject at the provider', form.person_claim)}</select>
<label for="${prefix}-unknown">People it signs in who are not members of this account</label>
<select id="${prefix}-unknown" name="unknown_people">${option('refuse', 'refuse them', form.unknown_people)}${option('add', 'add them as members (no project role)', form.unknown_people)}</select>
<fieldset><legend>Sign-in through it (OpenID Connect)</legend>
<p class="muted">Fill these in to let people sign in to the console and the OAuth pages through this provider. Leave the client ID empty for ID-JAGs only.</p>
<label for="${prefix}-client">Client ID</label>
<input type="text" id="${prefix}-client" name="oidc_client_id" maxlength="500" autocomplete="off" spellcheck="false" value="${form.oidc_client_id}">
<label for="${prefix}-secret">Client secret${secretSet ? ' (a secret is saved; leave empty to keep it)' : ''}</label>
<input type="password" id="${prefix}-secret" name="oidc_client_secret" maxlength="2000" autocomplete="new-password" spellcheck="false">
${secretSet ? html`<label class="inline"><input type="checkbox" name="clear_secret" value="1"> Remove the saved secret</label>` : null}
</fieldset>`;
}

const problemOf = (problem: IdentityProviderProblem | undefined, target: string | null): Html | null =>
  problem && problem.target === target ? html`<p class="error" role="alert">${problem.problem}</p>` : null;

function providerSection(data: IdentityProviderPageData, p: IdentityProviderView, csrf: string, problem?: IdentityProviderProblem): Html {
  const form =
    problem?.target === p.id
      ? problem.form
      : { issuer: p.issuer, person_claim: p.person_claim, unknown_people: p.unknown_people, oidc_client_id: p.oidc_client_id ?? '' };
  const signIn = p.oidc_client_id
    ? html`set up (client ID <code>${p.oidc_client_id}</code>, ${p.oidc_client_secret_set ? 'with a secret' : 'no secret'})`
    : html`<span class="muted">not set up (no client ID)</span>`;
  return html`<section class="panel" aria-labelledby="idp-${p.id}">
<h2 class="issuer" id="idp-${p.id}">${p.issuer}</h2>
<dl class="details provider">
<div><dt>Issuer</dt><dd><code>${p.issuer}</code></dd></div>
<div><dt>Names people by</dt><dd><code>${p.person_claim}</code>: ${CLAIMS[p.person_claim]}</dd></div>
<div><dt>People who are not members</dt><dd>${UNKNOWN[p.unknown_people]}</dd></div>
<div><dt>Sign-in through it</dt><dd>${signIn}</dd></div>
<div><dt>Registered</dt><dd>${time(p.created_at)}</dd></div>
</dl>
<details class="change"${problem?.target === p.id ? html` open` : null}><summary>Change</summary>
<form method="post" action="${identityProviderPath(data.membership.account_id, p.id)}">
${problemOf(problem, p.id)}
<input type="hidden" name="csrf" value="${csrf}">
${fields(`idp-${p.id}`, form, p.oidc_client_secret_set)}
<div class="actions"><button type="submit">Save</button></div>
</form></details>
<form method="post" action="${identityProviderPath(data.membership.account_id, `${p.id}/remove`)}">
<input type="hidden" name="csrf" value="${csrf}">
<div class="actions"><button type="submit" class="danger small">Remove this identity provider</button></div>
</form>
</section>`;
}

function copyValue(id: string, label: string, value: string, help: Html): Html {
  return html`<h3 id="${id}-label">${label}</h3>
<p class="muted">${help}</p>
<code class="secret" id="${id}" aria-labelledby="${id}-label">${value}</code>
<p><button type="button" class="secondary small" data-copy="${id}" hidden>Copy</button></p>`;
}

/** The account's identity providers, the form to register one, and the values to copy into the provider. */
export function identityProviderPage(
  res: Response,
  frame: Frame,
  data: IdentityProviderPageData,
  opts: { done?: unknown; problem?: IdentityProviderProblem } = {},
): void {
  const { problem } = opts;
  const done = typeof opts.done === 'string' && Object.hasOwn(NOTICES, opts.done) ? NOTICES[opts.done] : undefined;
  const blank = problem?.target === null ? problem.form : { issuer: '', person_claim: 'email', unknown_people: 'refuse', oidc_client_id: '' };
  const body = html`<h1>Identity provider</h1>
${done ? html`<p class="notice" role="status">${done}</p>` : null}
<p class="muted">Your company's identity provider (Okta, Microsoft Entra ID…) can sign this account's people in to the console and the OAuth pages (they type their work email on the sign-in page), and can let the AI clients your company manages connect for them with an identity assertion (ID-JAG), without a consent screen.</p>
${data.providers.length ? data.providers.map((p) => providerSection(data, p, frame.csrf, problem)) : html`<p>No identity provider is registered for this account yet.</p>`}
<form method="post" action="${identityProviderPath(data.membership.account_id)}" class="panel">
<h2 id="register">${data.providers.length ? 'Register another identity provider' : 'Register your identity provider'}</h2>
${problemOf(problem, null)}
<p class="muted">Reblog fetches the provider's discovery document (<code>/.well-known/openid-configuration</code> under the issuer) and its keys when you save.</p>
<input type="hidden" name="csrf" value="${frame.csrf}">
${fields('idp-new', blank, null)}
<div class="actions"><button type="submit">Register</button></div>
</form>
<section class="panel" aria-labelledby="copy">
<h2 id="copy">Values for your identity provider</h2>
<p class="muted">Copy these into the application you create for Reblog at your provider.</p>
${copyValue('copy-redirect', 'Sign-in redirect URI', data.copy.redirectUri, html`Okta: “Sign-in redirect URIs” of an OIDC Web Application. Entra ID: a “Web” redirect URI of the app registration.`)}
${copyValue('copy-audience', 'Audience of ID-JAGs (this server’s issuer)', data.copy.audience, html`The <code>aud</code> of the identity assertions the provider issues for Reblog.`)}
${copyValue('copy-resource', 'Resource', data.copy.resource, html`The MCP server the assertions are for (<code>resource</code>).`)}
</section>`;
  accountPage(res, frame, data, 'identity', 'Identity provider', body, problem?.status ?? 200);
}
