import type { Response } from 'express';
import type { AgentConfigVersion } from '../agents/agents.service.js';
import { WRITER_QUESTIONS, type SetupQuestion, type WriterAnswers } from '../agents/writer-questions.js';
import { TOOL_NAMES } from '../common/tool-names.js';
import { html, type Html } from '../web/html.js';
import { accountPage, accountPath, number, time, type Frame } from './console.pages.js';
import { VERSIONS_SHOWN, type SettingsData } from './console-settings.service.js';

// Project settings (owners): which tools run in the project, and the writer's answers with their
// versions. Two forms, each posting to its own path and coming back here (POST-redirect-GET), or
// with the writer form shown again and a sentence when an answer is refused.

/** Where a project's settings live. */
export const settingsPath = (accountId: string, projectId: string, rest = ''): string =>
  accountPath(accountId, `projects/${projectId}/settings${rest ? `/${rest}` : ''}`);

const NOTICES: Record<string, string> = {
  tools: 'Tools saved. Every key and app sees them on its next request.',
  writer: 'The writer’s answers are saved as a new version, listed first below.',
  unchanged: 'Nothing changed, so no new version was made.',
};

/** A question id as a few words: `banned_words` → “banned words”. */
const label = (id: string): string => id.replace(/_/g, ' ');

function toolsForm(data: SettingsData, csrf: string): Html {
  const disabled = new Set(data.project.disabled_tools);
  return html`<form method="post" action="${settingsPath(data.membership.account_id, data.project.id, 'tools')}" class="panel">
<h2 id="tools">Tools</h2>
<p class="muted">Untick a tool to turn it off in this project: no key or app may run it here, and it leaves the tool list of those that reach no other project where it is on. It takes effect on their next request.</p>
<input type="hidden" name="csrf" value="${csrf}">
<fieldset><legend>Tools on in this project</legend><div class="checks">
${TOOL_NAMES.map(
  (t) =>
    html`<input type="hidden" name="tool" value="${t}"><label class="inline"><input type="checkbox" name="enabled" value="${t}"${disabled.has(t) ? null : html` checked`}> <code>${t}</code></label>`,
)}
</div></fieldset>
<p class="muted">${number(TOOL_NAMES.length - TOOL_NAMES.filter((t) => disabled.has(t)).length)} of ${number(TOOL_NAMES.length)} tools on.</p>
<div class="actions"><button type="submit">Save tools</button></div>
</form>`;
}

function field(q: SetupQuestion, value: string): Html {
  const id = `writer-${q.id}`;
  if (q.options) {
    return html`<label for="${id}">${q.question}</label>
<select id="${id}" name="${q.id}">${q.options.map((o) => html`<option value="${o}"${o === value ? html` selected` : null}>${o}</option>`)}</select>`;
  }
  // Long answers get room to be read; short ones a line.
  return q.maxLength > 300
    ? html`<label for="${id}">${q.question}</label><textarea id="${id}" name="${q.id}" rows="3" maxlength="${q.maxLength}">${value}</textarea>`
    : html`<label for="${id}">${q.question}</label><input type="text" id="${id}" name="${q.id}" maxlength="${q.maxLength}" value="${value}">`;
}

function writerForm(data: SettingsData, csrf: string, answers: WriterAnswers, problem?: string): Html {
  const latest = data.versions[0];
  return html`<form method="post" action="${settingsPath(data.membership.account_id, data.project.id, 'writer')}" class="panel">
<h2 id="writer">Writer</h2>
<p class="muted">How <code>write_article</code> and <code>generate_image</code> write for this project; AI clients read it with <code>get_agent_config</code>. Saving keeps the old answers as a version of their own.</p>
${
  latest
    ? html`<p>Current: version ${number(latest.version)}, saved ${time(latest.created_at)}.</p>`
    : html`<p class="warning">The writer is not set up yet: <code>write_article</code> and <code>generate_image</code> answer <code>setup_required</code> until it is. The answers below are proposed from the project’s articles.</p>`
}
${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
<input type="hidden" name="csrf" value="${csrf}">
${WRITER_QUESTIONS.map((q) => field(q, answers[q.id] ?? ''))}
<div class="actions"><button type="submit">Save as version ${number((latest?.version ?? 0) + 1)}</button></div>
</form>`;
}

/** Which answers differ from the version before; null when that version is not among those shown. */
function changes(version: AgentConfigVersion, before: AgentConfigVersion | undefined): string[] | null {
  if (!before) return null;
  return WRITER_QUESTIONS.filter((q) => (version.answers[q.id] ?? '') !== (before.answers[q.id] ?? '')).map((q) => label(q.id));
}

function versionsList(versions: AgentConfigVersion[]): Html {
  if (!versions.length) return html`<p class="muted">No version yet.</p>`;
  // A list of disclosures rather than a table: the answers are long, and it reads the same at 360 px.
  return html`<ol class="versions">${versions.map((v, i) => {
    const changed = changes(v, versions[i + 1]);
    const what = v.version === 1 ? 'first version' : changed === null ? null : changed.length ? `changed ${changed.join(', ')}` : 'nothing changed';
    return html`<li><details><summary><strong>Version ${number(v.version)}</strong> · ${time(v.created_at)}${what ? html` · <span class="changed">${what}</span>` : null}</summary>
<dl class="answers">${WRITER_QUESTIONS.map((q) => html`<dt>${label(q.id)}</dt><dd>${v.answers[q.id] ? v.answers[q.id] : html`<span class="muted">(empty)</span>`}</dd>`)}</dl></details></li>`;
  })}</ol>`;
}

/** The settings of one project: tools, the writer's form and its versions, newest first. */
export function settingsPage(res: Response, frame: Frame, data: SettingsData, opts: { done?: unknown; answers?: WriterAnswers; problem?: string } = {}): void {
  const done = typeof opts.done === 'string' && Object.hasOwn(NOTICES, opts.done) ? NOTICES[opts.done] : undefined;
  const body = html`<p class="muted"><a href="${accountPath(data.membership.account_id)}">Overview</a> › ${data.project.name}</p>
<h1>Settings of ${data.project.name}</h1>
${done ? html`<p class="notice" role="status">${done}</p>` : null}
${toolsForm(data, frame.csrf)}
${writerForm(data, frame.csrf, opts.answers ?? data.answers, opts.problem)}
<h2 id="versions">Versions of the writer</h2>
<p class="muted">Newest first${data.versions.length >= VERSIONS_SHOWN ? `, the latest ${VERSIONS_SHOWN}` : ''}; open one to read its answers. A job keeps the version it was started with.</p>
${versionsList(data.versions)}`;
  accountPage(res, frame, data, 'settings', `Settings of ${data.project.name}`, body, opts.problem ? 400 : 200);
}
