import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { OUTCOMES, type Outcome } from '../activity/activity-entry.entity.js';
import { OPERATOR } from '../auth/credentials.service.js';
import { ROLES, SCOPES, roleAtLeast } from '../common/tool-names.js';
import type { Membership, ProjectRoleRow } from '../users/user.js';
import { html, type Html } from '../web/html.js';
import { sendPage } from '../web/page.js';
import type { AppRow, ConsoleAccount, CreatedKey, KeyForm, KeyRow, OverviewData } from './console.service.js';

// The console's pages: plain server-rendered HTML (src/web's `html` escapes every value), the
// console's CSP and its one script (local times, copy buttons). Times are written in UTC inside
// <time datetime> and shown in the browser's zone by the script; numbers get thousands separators.

export type Section = 'overview' | 'apps' | 'keys' | 'settings' | 'activity' | 'members' | 'jobs' | 'audit' | 'identity';

export const OUTCOME_LABELS: Record<Outcome, string> = {
  ok: 'OK',
  tool_error: 'Tool error',
  setup_required: 'Setup required',
  invalid: 'Invalid',
  denied: 'Denied',
  rate_limited: 'Rate limited',
};

const SCOPE_WORDS: Record<string, string> = {
  read: 'read: list and read articles',
  write: 'write: create and edit articles',
  generate: 'generate: write articles and images with AI',
  delete: 'delete: move articles to the trash',
};

/** Where a page of an account lives. */
export const accountPath = (accountId: string, rest = ''): string => `/console/accounts/${accountId}${rest ? `/${rest}` : ''}`;

export function number(n: number): string {
  return n.toLocaleString('en-US');
}

/** A moment in UTC, which the console's script shows in the browser's time zone. */
export function time(at: Date | string | null): Html {
  if (!at) return html`<span class="muted">never</span>`;
  const iso = new Date(at).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).host || uri;
  } catch {
    return uri;
  }
}

function nav(place: ConsoleAccount, current: Section, csrf: string, several: boolean): Html {
  const id = place.membership.account_id;
  const link = (section: Section, href: string, label: string) =>
    html`<a href="${href}"${current === section ? html` aria-current="page"` : null}>${label}</a>`;
  return html`<nav class="console" aria-label="Console">
<span class="account">${place.membership.account_name} <span class="badge">${place.membership.role}</span>${several ? html` · <a href="/console/">Switch account</a>` : null}</span>
${link('overview', accountPath(id), 'Overview')}
${link('apps', accountPath(id, 'apps'), 'Connected apps')}
${place.membership.role === 'owner' ? link('keys', accountPath(id, 'keys'), 'API keys') : null}
${link('activity', accountPath(id, 'activity'), 'Activity')}
${place.membership.role === 'owner' ? link('members', accountPath(id, 'members'), 'Members') : null}
${link('jobs', accountPath(id, 'jobs'), 'Jobs')}
${place.membership.role === 'owner' ? link('audit', accountPath(id, 'audit'), 'Audit') : null}
${place.membership.role === 'owner' ? link('identity', accountPath(id, 'identity-provider'), 'Identity provider') : null}
<form method="post" action="/oauth/logout"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="secondary small">Sign out</button></form>
</nav>`;
}

/** Who is asking and where: what every account page needs to draw its frame. */
export interface Frame {
  email: string;
  csrf: string;
  /** The person belongs to several accounts (the nav offers to switch). */
  several: boolean;
}

export function accountPage(res: Response, frame: Frame, place: ConsoleAccount, section: Section, title: string, body: Html, status = 200): void {
  sendPage(res, { title, body, signedInAs: frame.email, policy: 'console', wide: true, status, nav: nav(place, section, frame.csrf, frame.several) });
}

export function scrollTable(label: string, table: Html): Html {
  // Focusable so a keyboard can scroll it on a narrow screen.
  return html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}

export function projectList(projects: { project_id: string; role: string }[], names: Map<string, string>): Html {
  if (!projects.length) return html`<span class="muted">none</span>`;
  return html`<ul class="plain">${projects.map((p) => html`<li>${names.get(p.project_id) ?? p.project_id} <span class="badge">${p.role}</span></li>`)}</ul>`;
}

export const namesOf = (place: ConsoleAccount) => new Map(place.projects.map((p) => [p.project_id, p.name]));

/** The accounts the person belongs to. */
export function accountsPage(res: Response, email: string, accounts: Membership[]): void {
  const body = accounts.length
    ? html`<h1>Your accounts</h1>
<ul class="choices">${accounts.map((a) => html`<li><a href="${accountPath(a.account_id)}">${a.account_name}</a> <span class="badge">${a.role}</span></li>`)}</ul>`
    : html`<h1>No accounts yet</h1><p>You are not a member of any account. Ask an owner of one to add you.</p>`;
  sendPage(res, { title: 'Accounts', body, signedInAs: email, policy: 'console' });
}

/** Overview: projects, requests in the last 24 hours by outcome, jobs. */
export function overviewPage(res: Response, frame: Frame, data: OverviewData): void {
  const owner = data.membership.role === 'owner';
  const total = OUTCOMES.reduce((sum, o) => sum + data.outcomes[o], 0);
  const body = html`<h1>Overview</h1>
<h2>Projects</h2>
${
  data.projects.length
    ? scrollTable(
        'Projects',
        html`<table><thead><tr><th scope="col">Project</th><th scope="col">Your role</th><th scope="col" class="num">Articles</th></tr></thead>
<tbody>${data.projects.map((p) => html`<tr><td>${p.name}${owner ? html` <a href="${accountPath(data.membership.account_id, `projects/${p.project_id}/settings`)}" aria-label="Settings of ${p.name}">Settings</a>` : null}</td><td>${p.role}</td><td class="num">${number(data.articles.get(p.project_id) ?? 0)}</td></tr>`)}</tbody></table>`,
      )
    : html`<p class="muted">You have no role on a project of this account yet.</p>`
}
<h2>Requests in the last 24 hours</h2>
<p class="muted">${owner ? 'Every request to /mcp with a key or app of this account.' : 'Requests made by your connected apps.'} ${number(total)} in all.</p>
<dl class="stats">${OUTCOMES.map((o) => html`<div><dt>${OUTCOME_LABELS[o]}</dt><dd>${number(data.outcomes[o])}</dd></div>`)}</dl>
<h2>Jobs</h2>
<dl class="stats"><div><dt>Queued</dt><dd>${number(data.jobs.queued)}</dd></div><div><dt>Running</dt><dd>${number(data.jobs.running)}</dd></div></dl>`;
  accountPage(res, frame, data, 'overview', 'Overview', body);
}

const NOTICES: Record<string, string> = {
  disconnected: 'The app is disconnected: its next request is refused.',
  revoked: 'The key is revoked: its next request is refused.',
};

function notice(code: unknown): Html | null {
  return typeof code === 'string' && NOTICES[code] ? html`<p class="notice" role="status">${NOTICES[code]}</p>` : null;
}

/** Connected apps: the OAuth grants the person may see, each with a Disconnect button while live. */
export function appsPage(res: Response, frame: Frame, data: ConsoleAccount & { apps: AppRow[] }, done?: unknown): void {
  const names = namesOf(data);
  const owner = data.membership.role === 'owner';
  const rows = data.apps.map(
    (a) => html`<tr>
<td><strong>${a.name}</strong></td>
<td>${a.redirect_uris.length ? html`<ul class="plain">${[...new Set(a.redirect_uris.map(hostOf))].map((h) => html`<li><code>${h}</code></li>`)}</ul>` : html`<span class="muted">unknown</span>`}</td>
<td>${projectList(a.projects, names)}</td>
<td>${a.scopes.join(', ')}</td>
<td>${time(a.created_at)}</td>
<td>${time(a.last_used_at)}</td>
<td class="num">${number(a.requests_24h)}</td>
<td>${
      a.revoked_at
        ? html`<span class="muted">Disconnected ${time(a.revoked_at)}</span>`
        : html`<form method="post" action="${accountPath(data.membership.account_id, `apps/${a.id}/disconnect`)}"><input type="hidden" name="csrf" value="${frame.csrf}"><button type="submit" class="danger small">Disconnect</button></form>`
    }</td>
</tr>`,
  );
  const body = html`<h1>Connected apps</h1>
${notice(done)}
<p class="muted">${owner ? 'Apps people of this account connected by signing in (OAuth).' : 'Apps you connected by signing in (OAuth).'} Disconnecting one refuses its next request.</p>
${
  data.apps.length
    ? scrollTable(
        'Connected apps',
        html`<table><thead><tr><th scope="col">App</th><th scope="col">Redirects to</th><th scope="col">Projects</th><th scope="col">Scopes</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col" class="num">Requests (24 h)</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`,
      )
    : html`<p>No app is connected yet.</p>`
}`;
  accountPage(res, frame, data, 'apps', 'Connected apps', body);
}

function keyForm(place: ConsoleAccount, csrf: string, form?: KeyForm, problem?: string): Html {
  const chosen = new Map((form?.projects ?? []).map((p) => [p.project_id, p.role]));
  const scopes = form ? new Set(form.scopes) : new Set(['read', 'write', 'generate']);
  return html`<form method="post" action="${accountPath(place.membership.account_id, 'keys')}" class="panel">
<h2 id="new-key">Create an API key</h2>
${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
<input type="hidden" name="csrf" value="${csrf}">
<label for="key-name">Name</label>
<input type="text" id="key-name" name="name" maxlength="200" required value="${form?.name ?? ''}" placeholder="Claude Code on my laptop">
<fieldset><legend>Scopes</legend><div class="checks">
${SCOPES.map((s) => html`<label class="inline"><input type="checkbox" name="scope" value="${s}"${scopes.has(s) ? html` checked` : null}> ${SCOPE_WORDS[s]}</label>`)}
</div></fieldset>
<fieldset><legend>Projects and roles</legend>
${
  place.projects.length
    ? html`<ul class="choices">${place.projects.map((p: ProjectRoleRow) => {
        // Least privilege by default: editor (or the owner's own role when lower).
        const role = chosen.get(p.project_id) ?? (roleAtLeast(p.role, 'editor') ? 'editor' : p.role);
        return html`<li><label class="inline"><input type="checkbox" name="project" value="${p.project_id}"${chosen.has(p.project_id) || !form ? html` checked` : null}> ${p.name}</label>
<select name="role_${p.project_id}" aria-label="Role on ${p.name}">${ROLES.filter((r) => roleAtLeast(p.role, r)).map((r) => html`<option value="${r}"${r === role ? html` selected` : null}>${r}</option>`)}</select></li>`;
      })}</ul>`
    : html`<p class="muted">This account has no project yet.</p>`
}
</fieldset>
<div class="actions"><button type="submit">Create key</button></div>
</form>`;
}

/** API keys (owners): the list with revoke buttons, and the form that makes one. */
export function keysPage(
  res: Response,
  frame: Frame,
  data: ConsoleAccount & { keys: KeyRow[] },
  opts: { done?: unknown; form?: KeyForm; problem?: string } = {},
): void {
  const names = namesOf(data);
  const rows = data.keys.map(
    (k) => html`<tr>
<td><strong>${k.name}</strong></td>
<td><code>${k.prefix}…</code></td>
<td>${k.scopes.join(', ')}</td>
<td>${projectList(k.projects, names)}</td>
<td>${time(k.created_at)}</td>
<td>${k.created_by === OPERATOR ? html`<span class="muted">the operator</span>` : (k.created_by_email ?? html`<span class="muted">a person since removed</span>`)}</td>
<td>${time(k.last_used_at)}</td>
<td>${
      k.revoked_at
        ? html`<span class="muted">Revoked ${time(k.revoked_at)}</span>`
        : html`<form method="post" action="${accountPath(data.membership.account_id, `keys/${k.id}/revoke`)}"><input type="hidden" name="csrf" value="${frame.csrf}"><button type="submit" class="danger small">Revoke</button></form>`
    }</td>
</tr>`,
  );
  const body = html`<h1>API keys</h1>
${notice(opts.done)}
<p class="muted">A key lets a program call this account's MCP server with the scopes and project roles you give it. Its secret is shown once, when it is made.</p>
${
  data.keys.length
    ? scrollTable(
        'API keys',
        html`<table><thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Projects</th><th scope="col">Created</th><th scope="col">Created by</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead><tbody>${rows}</tbody></table>`,
      )
    : html`<p>No API key yet.</p>`
}
${keyForm(data, frame.csrf, opts.form, opts.problem)}`;
  accountPage(res, frame, data, 'keys', 'API keys', body, opts.problem ? 400 : 200);
}

/** The key just made: its secret, once, with copy buttons and the `claude mcp add` line. */
export function keyCreatedPage(res: Response, frame: Frame, place: ConsoleAccount, created: CreatedKey): void {
  const body = html`<h1>API key created</h1>
<p class="warning" role="status"><strong>Copy the secret now.</strong> It is shown only this once; Reblog keeps only a hash of it.</p>
<h2 id="secret-heading">Secret of “${created.key.name}”</h2>
<code class="secret" id="new-secret" aria-labelledby="secret-heading">${created.secret}</code>
<p><button type="button" class="secondary small" data-copy="new-secret" hidden>Copy secret</button></p>
<h2 id="command-heading">Connect Claude Code</h2>
<p>Paste this line into a terminal:</p>
<code class="secret" id="claude-command" aria-labelledby="command-heading">${created.command}</code>
<p><button type="button" class="secondary small" data-copy="claude-command" hidden>Copy command</button></p>
<div class="actions"><a class="button" href="${accountPath(place.membership.account_id, 'keys')}">Done</a></div>`;
  accountPage(res, frame, place, 'keys', 'API key created', body, 201);
}

/** The one answer for an id that does not exist and an id the person may not see. */
export function notFoundPage(res: Response, email: string | null): void {
  sendPage(res, {
    title: 'Not found',
    status: 404,
    signedInAs: email,
    policy: 'console',
    body: html`<h1>Not found</h1><p>There is nothing here that you can see. It may not exist, or it belongs to an account you are not a member of.</p><p><a href="/console/">Back to your accounts</a></p>`,
  });
}

/** A request to a host name this server does not answer to (the Host rule, against DNS rebinding); nobody is named signed in. */
export function hostRefusedPage(res: Response, host: string): void {
  sendPage(res, {
    title: 'Not served here',
    status: 403,
    signedInAs: null,
    policy: 'console',
    body: html`<h1>Not served here</h1><p class="error">This server does not answer to the host name "${host}". Open the console at the server's own address.</p>`,
  });
}

/** A post that did not come from this console's form in this browser. */
export function refusedPage(res: Response, email: string | null): void {
  sendPage(res, {
    title: 'Not done',
    status: 403,
    signedInAs: email,
    policy: 'console',
    body: html`<h1>Nothing was changed</h1><p class="error">This form was not sent from the console in your browser (it came from another site, or its security token does not match), so nothing was done.</p><p><a href="/console/">Back to the console</a></p>`,
  });
}

/**
 * A console export: `csv` streamed as a download named `filename`, never cached. A failure mid-stream
 * can no longer change the status: the download is cut short (pipeline destroys the response).
 */
export async function sendCsv(res: Response, filename: string, csv: Readable): Promise<void> {
  res.status(200).set({
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="${filename}"`,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  await pipeline(csv, res).catch(() => undefined);
}
