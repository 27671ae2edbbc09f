import type { Response } from 'express';
import type { ProjectRole, Scope } from '../../common/tool-names.js';
import { ROLES } from '../../common/tool-names.js';
import { html } from '../../web/html.js';
import { sendPage } from '../../web/page.js';

/** The scopes in plain words, as the consent page asks for them. */
export const SCOPE_WORDS: Record<Scope, string> = {
  read: 'Read your projects, articles, agent settings and jobs',
  write: 'Create, edit and publish articles, set up the writing agent, cancel jobs',
  generate: 'Write articles and make images with AI',
  delete: 'Delete articles',
};

const ROLE_WORDS: Record<ProjectRole, string> = {
  viewer: 'Viewer (read only)',
  editor: 'Editor (can change things)',
  owner: 'Owner (can also delete)',
};

/** Everything the consent page shows: the client, where the code goes, who is signed in, and the choices. */
export interface ConsentView {
  requestId: string;
  csrf: string;
  client: { name: string; /** The metadata document's host, for a client that has one; else the name is unverified. */ documentHost: string | null };
  redirect: { display: string; loopback: boolean; app: boolean; formAction: string };
  user: { email: string; name: string | null };
  accounts: { id: string; name: string; href: string }[];
  account: { id: string; name: string };
  scopes: { scope: Scope; checked: boolean }[];
  projects: { id: string; name: string; maxRole: ProjectRole; checked: boolean; role: ProjectRole }[];
  /** Why the last post was refused (400). */
  message?: string;
}

/** What an authorize or consent request answers. */
export type PageOutcome =
  | { kind: 'redirect'; location: string }
  | {
      kind: 'error';
      status: number;
      title: string;
      message: string;
      signedInAs?: string;
      back?: { href: string; label: string };
      headers?: Record<string, string>;
    }
  | { kind: 'consent'; status: number; view: ConsentView };

/** The page of a request refused for a while (429 over the per-IP limit, 503 when metadata-document fetches are full), with Retry-After. */
export function tryLaterPage(status: 429 | 503, message: string, retryAfterS: number): PageOutcome {
  return { kind: 'error', status, title: 'Try again in a moment', message, headers: { 'Retry-After': String(retryAfterS) } };
}

/** Sends an outcome: a 302, an error page, or the consent page. */
export function sendOutcome(res: Response, outcome: PageOutcome): void {
  if (outcome.kind === 'redirect') {
    res.status(302).set({ Location: outcome.location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).end();
    return;
  }
  if (outcome.kind === 'error') {
    if (outcome.headers) res.set(outcome.headers);
    sendPage(res, {
      status: outcome.status,
      title: outcome.title,
      signedInAs: outcome.signedInAs,
      body: html`<h1>${outcome.title}</h1>
<div class="error"><p>${outcome.message}</p></div>
${outcome.back ? html`<p><a href="${outcome.back.href}">${outcome.back.label}</a></p>` : null}`,
    });
    return;
  }
  const v = outcome.view;
  sendPage(res, {
    status: outcome.status,
    title: `Connect ${v.client.name}`,
    signedInAs: v.user.email,
    formAction: [v.redirect.formAction],
    body: consentBody(v),
  });
}

function consentBody(v: ConsentView) {
  const who = v.user.name ? html`${v.user.name} (${v.user.email})` : v.user.email;
  return html`<h1>Connect <strong>${v.client.name}</strong> to your Reblog account?</h1>
${v.message ? html`<div class="error" role="alert"><p>${v.message}</p></div>` : null}
<p>${
    v.client.documentHost
      ? html`<strong>${v.client.name}</strong> <span class="badge">described by ${v.client.documentHost}</span>`
      : html`<strong>${v.client.name}</strong> <span class="badge">unverified</span> <span class="muted">This name is what the app calls itself; Reblog cannot check it.</span>`
  }</p>
<div class="panel">
<p>If you approve, Reblog sends your browser back to <strong>${v.redirect.display}</strong> with access to what you choose below.</p>
${
  v.redirect.loopback
    ? html`<p class="warning">That address is a program on this computer. Approve only if you started connecting from an app on this computer just now.</p>`
    : v.redirect.app
      ? html`<p class="muted">That is an app installed on this computer, not a web site.</p>`
      : null
}
</div>
<p>You are signed in as <strong>${who}</strong>.</p>
${
  v.accounts.length > 1
    ? html`<nav aria-label="Accounts"><p>Account: ${v.accounts.map(
        (a, i) => html`${i ? ' · ' : ''}${a.id === v.account.id ? html`<strong>${a.name}</strong>` : html`<a href="${a.href}">${a.name}</a>`}`,
      )}</p></nav>`
    : null
}
<form method="post" action="/oauth/consent">
<input type="hidden" name="request_id" value="${v.requestId}">
<input type="hidden" name="csrf" value="${v.csrf}">
<input type="hidden" name="account_id" value="${v.account.id}">
<fieldset>
<legend>What ${v.client.name} may do</legend>
${v.scopes.map(
  (s) =>
    html`<label class="inline"><input type="checkbox" name="scope" value="${s.scope}"${s.checked ? html` checked` : null}> ${SCOPE_WORDS[s.scope]}</label><br>`,
)}
</fieldset>
<fieldset>
<legend>Projects of ${v.account.name} it may reach</legend>
${
  v.projects.length
    ? html`<ul class="choices">${v.projects.map(
        (p) => html`<li><label class="inline"><input type="checkbox" name="project" value="${p.id}"${p.checked ? html` checked` : null}> ${p.name}</label>
<label class="inline">as <select name="role_${p.id}" aria-label="Role on ${p.name}">${ROLES.slice(0, ROLES.indexOf(p.maxRole) + 1).map(
          (r) => html`<option value="${r}"${r === p.role ? html` selected` : null}>${ROLE_WORDS[r]}</option>`,
        )}</select></label></li>`,
      )}</ul>`
    : html`<p class="muted">You have no project in this account.</p>`
}
</fieldset>
<div class="actions">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`;
}
