import type { Response } from 'express';
import { AUDIT_ACTIONS, type AuditEventView } from '../audit/audit.service.js';
import { html, type Html } from '../web/html.js';
import { AUDIT_QUERY_FIELDS, type AuditPageData, type AuditPageQuery } from './console-audit.service.js';
import { accountPage, accountPath, time, type Frame } from './console.pages.js';

// The Audit page (docs/console.md#audit): filters as a GET form, the events newest first with cursor
// paging (older pages only: "Newest" goes back to the start), and the CSV link with the same filters.

function queryString(query: AuditPageQuery, extra: Partial<AuditPageQuery> = {}): string {
  const params = new URLSearchParams();
  for (const field of AUDIT_QUERY_FIELDS) {
    const value = field in extra ? extra[field] : query[field];
    if (value) params.set(field, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A time field's value as `datetime-local` takes it (see the Activity page's). */
function localValue(value: string): string {
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:[\d.]+)?$/.test(value)) return value.slice(0, 16);
  const at = new Date(value);
  return value && !Number.isNaN(at.getTime()) ? at.toISOString().slice(0, 16) : value;
}

function filterForm(data: AuditPageData): Html {
  const q = data.query;
  const path = accountPath(data.membership.account_id, 'audit');
  const actions = q.action && !(AUDIT_ACTIONS as readonly string[]).includes(q.action) ? [...AUDIT_ACTIONS, q.action] : AUDIT_ACTIONS;
  return html`<form method="get" action="${path}" class="panel filters" aria-labelledby="filters-heading">
<h2 id="filters-heading">Filter</h2>
<div class="fields">
<div><label for="f-actor">Who (email, user id or operator)</label><input type="text" id="f-actor" name="actor" maxlength="320" value="${q.actor}"></div>
<div><label for="f-action">Action</label>
<select id="f-action" name="action"><option value="">Any</option>${actions.map((a) => html`<option value="${a}"${a === q.action ? html` selected` : null}>${a}</option>`)}</select></div>
<div><label for="f-from">From <span data-zone>(UTC)</span></label><input type="datetime-local" id="f-from" name="from" value="${localValue(q.from)}" data-utc></div>
<div><label for="f-to">To <span data-zone>(UTC)</span></label><input type="datetime-local" id="f-to" name="to" value="${localValue(q.to)}" data-utc></div>
</div>
<div class="actions"><button type="submit">Apply filters</button><a class="button secondary" href="${path}">Clear</a></div>
</form>`;
}

function actor(e: AuditEventView): Html {
  if (e.actor_type === 'operator') return html`<span class="badge">operator</span>`;
  if (e.actor_type === 'user') return html`${e.actor_email ?? ''} <code>${(e.actor_id ?? '').slice(0, 8)}</code>`;
  if (e.actor_type === 'client') return html`app <code>${e.actor_id ?? ''}</code>`;
  if (e.actor_type === 'credential') return html`key or app <code>${(e.actor_id ?? '').slice(0, 8)}</code>`;
  return html`<span class="muted">system</span>`;
}

/**
 * A target or change as `key: value` lines that wrap (an object inside is indented under its key; a list
 * is its items, comma-separated); nothing for an empty one. The CSV export keeps the JSON.
 */
function pairs(value: unknown): Html | string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.length ? html`${value.map((v, i) => html`${i ? ', ' : ''}${scalarOrPairs(v)}`)}` : '';
  if (typeof value !== 'object') return String(value);
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.length) return '';
  return html`<ul class="pairs">${entries.map(([k, v]) => html`<li><span class="key">${k}:</span> ${scalarOrPairs(v)}</li>`)}</ul>`;
}

/** A change reads before → after (PostgreSQL's jsonb stores its keys shortest first: `after` ahead of `before`). */
function beforeThenAfter(change: unknown): unknown {
  if (!change || typeof change !== 'object' || Array.isArray(change)) return change;
  const { before, after, ...rest } = change as Record<string, unknown>;
  return { ...(before !== undefined && { before }), ...(after !== undefined && { after }), ...rest };
}

function scalarOrPairs(value: unknown): Html | string {
  if (value === null || (Array.isArray(value) && !value.length)) return html`<span class="muted">none</span>`;
  if (typeof value === 'string') return html`<code>${value}</code>`;
  return typeof value === 'object' ? pairs(value) : String(value);
}

const HEADERS = ['Time', 'Who', 'Action', 'Target', 'Change', 'IP address', 'Request id'] as const;

function rows(events: AuditEventView[]): Html[] {
  const cell = (label: (typeof HEADERS)[number], content: Html | string | null) => html`<td data-label="${label}">${content}</td>`;
  return events.map(
    (e) => html`<tr>
${cell('Time', time(e.at))}
${cell('Who', actor(e))}
${cell('Action', html`<code>${e.action}</code>`)}
${cell('Target', pairs(e.target))}
${cell('Change', pairs(beforeThenAfter(e.change)))}
${cell('IP address', e.ip ?? html`<span class="muted">—</span>`)}
${cell('Request id', e.request_id ? html`<code>${e.request_id}</code>` : html`<span class="muted">—</span>`)}
</tr>`,
  );
}

/** The Audit page. A refused filter shows the form again with the sentence and a 400. */
export function auditPage(res: Response, frame: Frame, data: AuditPageData): void {
  const q = data.query;
  const path = accountPath(data.membership.account_id, 'audit');
  const list = data.problem
    ? null
    : data.events.length
      ? // Not a sideways-scrolling table: its cells wrap, and on a narrow screen each event is a block of labelled lines.
        html`<table class="audit" aria-label="Audit trail"><thead><tr>${HEADERS.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows(data.events)}</tbody></table>`
      : html`<p>${q.cursor ? 'No older events.' : 'No event matches these filters.'}</p>`;
  const body = html`<h1>Audit</h1>
<p class="muted">Every change to who can do what in this account — members and roles, API keys, connected apps, sign-in links, projects and settings — by whom, from where. Newest first.</p>
${data.problem ? html`<p class="error" role="alert">${data.problem}</p>` : null}
${filterForm(data)}
<div class="log-head"><h2>Events</h2>${data.problem ? null : html`<a class="button secondary small" href="${path}/export${queryString(q, { cursor: '' })}" download>Export CSV</a>`}</div>
${list}
${
  data.problem
    ? null
    : html`<nav class="pager" aria-label="Pages">${q.cursor ? html`<a href="${path}${queryString(q, { cursor: '' })}">Newest</a>` : null}${data.next ? html`<a href="${path}${queryString(q, { cursor: data.next })}" rel="next">Older events</a>` : null}</nav>`
}`;
  accountPage(res, frame, data, 'audit', 'Audit', body, data.problem ? 400 : 200);
}
