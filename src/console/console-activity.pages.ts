import { scaleBand, scaleLinear } from 'd3-scale';
import { stack } from 'd3-shape';
import type { Response } from 'express';
import { OUTCOMES, type Outcome } from '../activity/activity-entry.entity.js';
import type { ActivityChart } from '../activity/activity-reports.service.js';
import { TOOL_NAMES } from '../common/tool-names.js';
import { html, type Html } from '../web/html.js';
import type { ActivityPageData, ActivityQuery, CredentialChoice, EntryPageData, EntryView } from './console-activity.service.js';
import { QUERY_FIELDS } from './console-activity.service.js';
import { accountPage, accountPath, namesOf, number, OUTCOME_LABELS, scrollTable, time, type Frame } from './console.pages.js';

// The Activity page (docs/console.md#activity): filters as a GET form, the log newest first with cursor
// paging (older pages only: "Newest" goes back to the start), an entry's page, the CSV link with the
// same filters, and the chart of requests per hour (24 h) or per day (7 days) stacked by outcome.
//
// The chart is SVG drawn here, on the server: d3-scale lays out the bars and the value axis (nice
// round ticks), d3-shape's stack() piles the outcomes; no script and no inline style (the console's
// CSP), each outcome a class of the stylesheet, a <title> per bar and the same figures as a table.

/** A query string of the filters given (empty ones left out), with `extra` added or replaced. */
export function queryString(query: ActivityQuery, extra: Partial<ActivityQuery> = {}): string {
  const params = new URLSearchParams();
  for (const field of QUERY_FIELDS) {
    const value = field in extra ? extra[field] : query[field];
    if (value) params.set(field, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The same filters from the newest entry on (the CSV link leaves the chart's span out too). */
const NEWEST: Partial<ActivityQuery> = { cursor: '' };
const CSV: Partial<ActivityQuery> = { cursor: '', chart: '' };

function outcomeLabel(outcome: string): Html {
  const known = (OUTCOMES as readonly string[]).includes(outcome);
  return html`<span class="outcome"><span class="swatch${known ? html` o-${outcome}` : null}" aria-hidden="true"></span>${known ? OUTCOME_LABELS[outcome as Outcome] : outcome}</span>`;
}

function credentialLabel(c: { type: string; name: string }, oauth?: boolean): string {
  return `${c.name} (${c.type === 'api_key' ? 'API key' : oauth === false ? 'grant' : 'app'})`;
}

function select(name: string, label: string, current: string, options: { value: string; label: string }[]): Html {
  const all = current && !options.some((o) => o.value === current) ? [...options, { value: current, label: current }] : options;
  return html`<div><label for="f-${name}">${label}</label>
<select id="f-${name}" name="${name}"><option value="">Any</option>${all.map((o) => html`<option value="${o.value}"${o.value === current ? html` selected` : null}>${o.label}</option>`)}</select></div>`;
}

/**
 * A time field's value as `datetime-local` takes it: a time without an offset as typed (a refused
 * February 31st is not rolled over into March: the browser shows the field empty), one with an
 * offset in UTC. The fields say UTC; console.js (`data-utc`, `data-zone`) shows them in the browser's
 * zone and sends them with its offset, so without the script the page stays all UTC.
 */
function localValue(value: string): string {
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:[\d.]+)?$/.test(value)) return value.slice(0, 16);
  const at = new Date(value);
  return value && !Number.isNaN(at.getTime()) ? at.toISOString().slice(0, 16) : value;
}

function filterForm(data: ActivityPageData): Html {
  const q = data.query;
  const path = accountPath(data.membership.account_id, 'activity');
  return html`<form method="get" action="${path}" class="panel filters" aria-labelledby="filters-heading">
<h2 id="filters-heading">Filter</h2>
<div class="fields">
${select(
  'outcome',
  'Outcome',
  q.outcome,
  OUTCOMES.map((o) => ({ value: o, label: OUTCOME_LABELS[o] })),
)}
${select(
  'tool',
  'Tool',
  q.tool,
  TOOL_NAMES.map((t) => ({ value: t, label: t })),
)}
${select(
  'credential',
  data.membership.role === 'owner' ? 'Key or app' : 'App',
  q.credential,
  data.credentials.map((c: CredentialChoice) => ({ value: c.id, label: credentialLabel(c, c.oauth) })),
)}
<div><label for="f-client">Client name</label><input type="text" id="f-client" name="client" maxlength="200" value="${q.client}" placeholder="claude-ai"></div>
<div><label for="f-from">From <span data-zone>(UTC)</span></label><input type="datetime-local" id="f-from" name="from" value="${localValue(q.from)}" data-utc></div>
<div><label for="f-to">To <span data-zone>(UTC)</span></label><input type="datetime-local" id="f-to" name="to" value="${localValue(q.to)}" data-utc></div>
</div>
${q.chart ? html`<input type="hidden" name="chart" value="${q.chart}">` : null}
<div class="actions"><button type="submit">Apply filters</button><a class="button secondary" href="${path}${queryString({ ...q, outcome: '', tool: '', credential: '', client: '', from: '', to: '', cursor: '' })}">Clear</a></div>
</form>`;
}

const CHART = { width: 720, height: 220, top: 12, right: 8, bottom: 30, left: 48 };
const px = (n: number) => n.toFixed(1);

/** When a bucket starts, as the chart's labels write it (UTC; the script shows hours in the browser's zone). */
function bucketText(start: Date, span: '24h' | '7d', long: boolean): string {
  const iso = start.toISOString();
  if (span === '24h') return long ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso.slice(11, 16);
  return start.toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' }) + (long ? ' (UTC day)' : '');
}

/** The stacked bar chart as SVG, with a legend and a table of the same figures. */
export function activityChart(chart: ActivityChart, span: '24h' | '7d'): Html {
  const data = chart.buckets;
  const total = data.reduce((sum, b) => sum + b.total, 0);
  const x = scaleBand<number>()
    .domain(data.map((_, i) => i))
    .range([CHART.left, CHART.width - CHART.right])
    .paddingInner(0.2)
    .paddingOuter(0.1);
  const y = scaleLinear()
    .domain([0, Math.max(1, ...data.map((b) => b.total))])
    // Rounded up to the 4 ticks drawn, so the tallest bar ends at or under a labelled line.
    .nice(4)
    .range([CHART.height - CHART.bottom, CHART.top]);
  const ticks = y.ticks(4).filter(Number.isInteger);
  const series = stack<ActivityChart['buckets'][number], Outcome>()
    .keys(OUTCOMES)
    .value((b, key) => b.outcomes[key])(data);
  const hourly = span === '24h';
  const bars = series.flatMap((s) =>
    s.flatMap((point, i) => {
      const [low, high] = point;
      if (high <= low) return [];
      const n = high - low;
      const what = `${number(n)} ${OUTCOME_LABELS[s.key]}`;
      const at = data[i].start;
      // The script rewrites the hourly titles in the browser's zone (data-at); days stay UTC days.
      return [
        html`<rect class="bar o-${s.key}" x="${px(x(i)!)}" y="${px(y(high))}" width="${px(x.bandwidth())}" height="${px(y(low) - y(high))}"><title${hourly ? html` data-at="${at.toISOString()}" data-what="${what}"` : null}>${what} · ${bucketText(at, span, true)}</title></rect>`,
      ];
    }),
  );
  // Hour labels every 3 hours (8 fit at 360 px), day labels every day.
  const labels = data.flatMap((b, i) =>
    hourly && i % 3 !== 0
      ? []
      : [
          html`<text class="x-label" x="${px(x(i)! + x.bandwidth() / 2)}" y="${CHART.height - CHART.bottom + 18}"${hourly ? html` data-at="${b.start.toISOString()}"` : null}>${bucketText(b.start, span, false)}</text>`,
        ],
  );
  const grid = ticks.map(
    (v) =>
      html`<line class="grid" x1="${CHART.left}" x2="${CHART.width - CHART.right}" y1="${px(y(v))}" y2="${px(y(v))}"></line><text class="y-label" x="${CHART.left - 6}" y="${px(y(v) + 4)}">${number(v)}</text>`,
  );
  const what = hourly ? 'Requests per hour over the last 24 hours' : 'Requests per day over the last 7 days (UTC days)';
  const table = html`<table><thead><tr><th scope="col">${hourly ? 'Hour starting' : 'Day (UTC)'}</th>${OUTCOMES.map((o) => html`<th scope="col" class="num">${OUTCOME_LABELS[o]}</th>`)}<th scope="col" class="num">Total</th></tr></thead>
<tbody>${data.map((b) => html`<tr><th scope="row">${hourly ? time(b.start) : bucketText(b.start, span, false)}</th>${OUTCOMES.map((o) => html`<td class="num">${number(b.outcomes[o])}</td>`)}<td class="num">${number(b.total)}</td></tr>`)}</tbody></table>`;
  return html`<figure class="chart">
<div class="chart-scroll" role="region" aria-label="Chart" tabindex="0">
<svg class="chart" viewBox="0 0 ${CHART.width} ${CHART.height}" role="img" aria-label="${what}, stacked by outcome: ${number(total)} in all. The figures are in the table below the chart.">
<g class="axis">${grid}</g>
<g class="bars">${bars}</g>
<g class="axis">${labels}</g>
</svg>
</div>
<figcaption><ul class="legend">${OUTCOMES.map((o) => html`<li>${outcomeLabel(o)}</li>`)}</ul></figcaption>
</figure>
<details class="chart-data"><summary>The chart's figures as a table</summary>${scrollTable(what, table)}</details>`;
}

function entryRows(data: ActivityPageData): Html[] {
  const names = namesOf(data);
  return data.entries.map(
    (e: EntryView) => html`<tr>
<td><a href="${accountPath(data.membership.account_id, `activity/${e.id}`)}">${time(e.at)}</a></td>
<td>${e.client ? e.client.name : html`<span class="muted">none</span>`}</td>
<td>${credentialLabel(e.credential)}</td>
<td><code>${e.method}</code></td>
<td>${e.tool ? html`<code>${e.tool}</code>` : html`<span class="muted">—</span>`}</td>
<td>${e.project_id ? (names.get(e.project_id) ?? html`<code>${e.project_id.slice(0, 8)}</code>`) : html`<span class="muted">—</span>`}</td>
<td>${outcomeLabel(e.outcome)}</td>
<td class="num">${number(e.duration_ms)} ms</td>
<td class="num">${number(e.count)}</td>
</tr>`,
  );
}

/** The Activity page. A refused filter shows the form again with the sentence and a 400. */
export function activityPage(res: Response, frame: Frame, data: ActivityPageData): void {
  const q = data.query;
  const path = accountPath(data.membership.account_id, 'activity');
  const owner = data.membership.role === 'owner';
  const spanLink = (span: '24h' | '7d', label: string) =>
    data.span === span
      ? html`<strong aria-current="true">${label}</strong>`
      : html`<a href="${path}${queryString(q, { chart: span === '24h' ? '' : span })}">${label}</a>`;
  const list = data.problem
    ? null
    : data.entries.length
      ? scrollTable(
          'Activity log',
          html`<table class="log"><thead><tr><th scope="col">Time</th><th scope="col">Client</th><th scope="col">Key or app</th><th scope="col">Method</th><th scope="col">Tool</th><th scope="col">Project</th><th scope="col">Outcome</th><th scope="col" class="num">Duration</th><th scope="col" class="num">Count</th></tr></thead>
<tbody>${entryRows(data)}</tbody></table>`,
        )
      : html`<p>${q.cursor ? 'No older requests.' : 'No request matches these filters.'}</p>`;
  const body = html`<h1>Activity</h1>
<p class="muted">${owner ? 'Every request to this account’s MCP server, by its API keys and connected apps.' : 'Requests made by the apps you connected.'} Newest first.</p>
${data.problem ? html`<p class="error" role="alert">${data.problem}</p>` : null}
<h2>${data.span === '24h' ? 'Requests per hour, last 24 hours' : 'Requests per day, last 7 days'}</h2>
<p class="chart-span">${spanLink('24h', 'Last 24 hours')} · ${spanLink('7d', 'Last 7 days')} <span class="muted">(not filtered)</span></p>
${activityChart(data.chart, data.span)}
${filterForm(data)}
<div class="log-head"><h2 id="log-heading">Requests</h2>${data.problem ? null : html`<a class="button secondary small" href="${accountPath(data.membership.account_id, 'activity/export')}${queryString(q, CSV)}" download>Export CSV</a>`}</div>
${list}
${
  data.problem
    ? null
    : html`<nav class="pager" aria-label="Pages">${q.cursor ? html`<a href="${path}${queryString(q, NEWEST)}">Newest</a>` : null}${data.next ? html`<a href="${path}${queryString(q, { cursor: data.next })}" rel="next">Older requests</a>` : null}</nav>`
}`;
  accountPage(res, frame, data, 'activity', 'Activity', body, data.problem ? 400 : 200);
}

/** One entry: everything the log has of it, the error's message and the session included. */
export function entryPage(res: Response, frame: Frame, data: EntryPageData): void {
  const e = data.entry;
  const names = namesOf(data);
  const path = accountPath(data.membership.account_id, 'activity');
  const row = (label: string, value: Html | string) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`;
  const none = html`<span class="muted">none</span>`;
  const body = html`<p><a href="${path}">← Activity</a></p>
<h1>${e.tool ? html`<code>${e.tool}</code>` : html`<code>${e.method}</code>`} ${outcomeLabel(e.outcome)}</h1>
<dl class="details">
${row('Time', time(e.at))}
${row('Client', e.client ? `${e.client.name}${e.client.version ? ` ${e.client.version}` : ''}` : none)}
${row('Key or app', html`${credentialLabel(e.credential)} · <a href="${path}${queryString({ ...emptyQuery(), credential: e.credential.id })}">its requests</a>`)}
${row('Session', e.session_id ? html`<code>${e.session_id}</code>` : html`<span class="muted">none (a request outside a session)</span>`)}
${row('Method', html`<code>${e.method}</code>`)}
${row('Tool', e.tool ? html`<code>${e.tool}</code>` : none)}
${row('Project', e.project_id ? (names.get(e.project_id) ?? html`<code>${e.project_id}</code>`) : none)}
${row('Outcome', outcomeLabel(e.outcome))}
${row('Error', e.error ? html`<code>${e.error.code}</code> ${e.error.message}` : none)}
${row('Duration', `${number(e.duration_ms)} ms`)}
${row('Count', e.count > 1 ? `${number(e.count)} requests folded into this entry (refused within the same second)` : '1')}
${row('Entry id', html`<code>${e.id}</code>`)}
</dl>`;
  accountPage(res, frame, data, 'activity', 'Activity entry', body);
}

function emptyQuery(): ActivityQuery {
  return Object.fromEntries(QUERY_FIELDS.map((f) => [f, ''])) as unknown as ActivityQuery;
}
