import type { Response } from 'express';
import { ROLES } from '../common/tool-names.js';
import type { LoginLinkView } from '../login-links/login-links.service.js';
import { html, type Html } from '../web/html.js';
import { accountPage, accountPath, namesOf, number, projectList, scrollTable, time, type Frame } from './console.pages.js';
import type { ConsoleAccount } from './console.service.js';
import type { MemberData, MemberForm, MembersData, MemberRow } from './console-members.service.js';

// The Members pages (owners only): the list with the form that adds someone, one member's page
// (change roles, sign-in link, remove), and the sign-in link shown once.

const NOTICES: Record<string, string> = {
  added: 'The person is added: their roles apply from their next request.',
  changed: 'The roles are changed: they apply from the next request of every app and key of this person.',
  removed: 'The person is removed from this account: their apps lose it from their next request.',
};

function notice(code: unknown): Html | null {
  return typeof code === 'string' && NOTICES[code] ? html`<p class="notice" role="status">${NOTICES[code]}</p>` : null;
}

function problemLine(problem?: string): Html | null {
  return problem ? html`<p class="error" role="alert">${problem}</p>` : null;
}

const memberPath = (accountId: string, userId: string, rest = '') => accountPath(accountId, `members/${userId}${rest ? `/${rest}` : ''}`);

/** The account role and the project roles (for a member), as fields of a form. `prefix` keeps ids unique on a page. */
function roleFields(place: ConsoleAccount, prefix: string, role: string, projects: Map<string, string>): Html {
  return html`<label for="${prefix}-role">Account role</label>
<p class="muted" id="${prefix}-role-hint">An owner manages everything of the account; a member sees only the projects where they have a role.</p>
<select id="${prefix}-role" name="role" aria-describedby="${prefix}-role-hint">${(['member', 'owner'] as const).map((r) => html`<option value="${r}"${r === role ? html` selected` : null}>${r}</option>`)}</select>
<fieldset><legend>Project roles (for a member)</legend>
<p class="muted">An owner has the owner role on every project: these apply to a member.</p>
${
  place.projects.length
    ? html`<ul class="choices">${place.projects.map(
        (p) => html`<li><label for="${prefix}-project-${p.project_id}">${p.name}</label>
<select id="${prefix}-project-${p.project_id}" name="project_role_${p.project_id}"><option value="">no role</option>${ROLES.map((r) => html`<option value="${r}"${projects.get(p.project_id) === r ? html` selected` : null}>${r}</option>`)}</select></li>`,
      )}</ul>`
    : html`<p class="muted">This account has no project yet.</p>`
}
</fieldset>`;
}

/** The members of the account and the form that adds one. */
export function membersPage(
  res: Response,
  frame: Frame,
  data: MembersData,
  opts: { done?: unknown; problem?: string; status?: number; form?: MemberForm } = {},
): void {
  const id = data.membership.account_id;
  const names = namesOf(data);
  const rows = data.members.map(
    (m: MemberRow) => html`<tr>
<td><a href="${memberPath(id, m.user_id)}">${m.email}</a></td>
<td><span class="badge">${m.role}</span></td>
<td>${m.role === 'owner' ? html`<span class="muted">owner of every project</span>` : projectList(m.projects, names)}</td>
</tr>`,
  );
  const form = opts.form;
  const body = html`<h1>Members</h1>
${notice(opts.done)}
<p class="muted">The people who sign in to this account, with their role. What their connected apps may do follows these roles from their next request.</p>
${scrollTable('Members', html`<table><thead><tr><th scope="col">Person</th><th scope="col">Account role</th><th scope="col">Project roles</th></tr></thead><tbody>${rows}</tbody></table>`)}
${data.next_cursor ? html`<p><a href="${accountPath(id, 'members')}?cursor=${data.next_cursor}">Next ${number(data.members.length)} members</a></p>` : null}
<form method="post" action="${accountPath(id, 'members')}" class="panel">
<h2 id="add-member">Add a person</h2>
${problemLine(opts.problem)}
<p class="muted">By email: someone new gets an account on this server, and signs in ${data.links ? 'with a sign-in link you make for them, or ' : ''}with the sign-in methods of this server.</p>
<input type="hidden" name="csrf" value="${frame.csrf}">
<label for="add-email">Email</label>
<input type="email" id="add-email" name="email" maxlength="320" required autocomplete="off" value="${form?.email ?? ''}" placeholder="ada@example.com">
${roleFields(data, 'add', form?.role ?? 'member', form?.projects ?? new Map())}
<div class="actions"><button type="submit">Add person</button></div>
</form>`;
  accountPage(res, frame, data, 'members', 'Members', body, opts.status ?? 200);
}

/** One member: change their roles, make them a sign-in link, remove them. */
export function memberPage(res: Response, frame: Frame, data: MemberData, opts: { problem?: string; status?: number; form?: MemberForm } = {}): void {
  const id = data.membership.account_id;
  const m = data.member;
  const current = new Map(m.role === 'member' ? m.projects.map((p) => [p.project_id, p.role as string]) : []);
  const body = html`<p><a href="${accountPath(id, 'members')}">← Members</a></p>
<h1>${m.email}</h1>
${problemLine(opts.problem)}
<p><span class="badge">${m.role}</span> ${m.role === 'owner' ? html`<span class="muted">owner of every project</span>` : null}</p>
${m.role === 'member' ? projectList(m.projects, namesOf(data)) : null}
<form method="post" action="${memberPath(id, m.user_id)}" class="panel">
<h2>Change roles</h2>
<input type="hidden" name="csrf" value="${frame.csrf}">
${roleFields(data, 'change', opts.form?.role ?? m.role, opts.form?.projects ?? current)}
${data.self ? html`<p class="warning">These are your own roles: as a member you no longer see this page.</p>` : null}
<div class="actions"><button type="submit">Save roles</button></div>
</form>
${
  data.links && data.linkRefusal
    ? html`<section class="panel">
<h2>Sign-in link</h2>
<p>${data.linkRefusal}</p>
</section>`
    : data.links
      ? html`<form method="post" action="${memberPath(id, m.user_id, 'sign-in-link')}" class="panel">
<h2>Sign-in link</h2>
<p class="muted">A link that signs ${m.email} in once, for 15 minutes. It is shown to you once: send it to them yourself.</p>
<input type="hidden" name="csrf" value="${frame.csrf}">
<div class="actions"><button type="submit" class="secondary">Make a sign-in link</button></div>
</form>`
      : null
}
<form method="post" action="${memberPath(id, m.user_id, 'remove')}" class="panel">
<h2>Remove from this account</h2>
<p class="muted">They lose every project of this account: from their next request, their connected apps reach nothing of it.</p>
<input type="hidden" name="csrf" value="${frame.csrf}">
<div class="actions"><button type="submit" class="danger">Remove from account</button></div>
</form>`;
  accountPage(res, frame, data, 'members', m.email, body, opts.status ?? 200);
}

/** The sign-in link just made: shown in this answer only, with a copy button. */
export function signInLinkPage(res: Response, frame: Frame, data: MemberData, link: LoginLinkView): void {
  const id = data.membership.account_id;
  const body = html`<h1>Sign-in link for ${data.member.email}</h1>
<p class="warning" role="status"><strong>Copy the link now.</strong> It is shown only this once, signs in once, and works until ${time(link.expires_at)}.</p>
<h2 id="link-heading">Link</h2>
<code class="secret" id="sign-in-link" aria-labelledby="link-heading">${link.url}</code>
<p><button type="button" class="secondary small" data-copy="sign-in-link" hidden>Copy link</button></p>
<p class="muted">Send it to them yourself (chat, email). Anyone who opens it before they do signs in as them.</p>
<div class="actions"><a class="button" href="${memberPath(id, data.member.user_id)}">Done</a></div>`;
  accountPage(res, frame, data, 'members', 'Sign-in link', body, 201);
}
