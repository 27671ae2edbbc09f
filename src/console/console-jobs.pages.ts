import type { Response } from 'express';
import type { JobView } from '../jobs/jobs.service.js';
import { html, type Html } from '../web/html.js';
import { accountPage, accountPath, namesOf, number, scrollTable, time, type Frame } from './console.pages.js';
import type { JobsData } from './console-jobs.service.js';

// The Jobs page: write_article and generate_image jobs, newest first, with what each made and a
// Cancel button while one is queued or running.

const TOOL_LABELS: Record<string, string> = { write_article: 'Write article', generate_image: 'Generate image' };

const NOTICES: Record<string, string> = { cancelled: 'The job is cancelled: it stops and writes nothing more.' };

/** An id, shortened to its last characters (the whole id on hover and in the page's forms). */
function shortId(id: string): Html {
  return html`<code class="muted" title="${id}">…${id.slice(-8)}</code>`;
}

function percent(progress: number): string {
  return `${Math.round(Math.min(Math.max(progress, 0), 1) * 100)}%`;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}

/** What a finished job made (its article, its image), or why it did not. */
function made(accountId: string, job: JobView): Html {
  if (job.error) return html`<span class="error">${job.error.message}</span>`;
  const result = job.result ?? {};
  const article = result.article as Record<string, unknown> | undefined;
  if (article && str(article.id)) {
    return html`Article “${str(article.title) ?? 'Untitled'}” <span class="badge">${str(article.status) ?? 'draft'}</span> ${shortId(str(article.id)!)}`;
  }
  const media = result.media as Record<string, unknown> | undefined;
  if (media && str(media.id)) {
    const sized = typeof media.width === 'number' && typeof media.height === 'number' && media.width > 0;
    const size = sized ? `${number(media.width as number)} × ${number(media.height as number)}` : '';
    // A thumbnail 96 px wide, its height from the image's own proportions.
    const height = sized ? String(Math.max(1, Math.round((96 * (media.height as number)) / (media.width as number)))) : '72';
    const src = accountPath(accountId, `jobs/images/${str(media.id)}`);
    return html`<a href="${src}"><img src="${src}" alt="Image made by the job${size ? `, ${size}` : ''}" width="96" height="${height}"></a> ${size}${str(result.article_id) ? html`<br>featured on article ${shortId(str(result.article_id)!)}` : null}`;
  }
  return html`<span class="muted">${job.status === 'succeeded' ? 'done' : 'nothing yet'}</span>`;
}

/** The jobs the person sees, with Cancel where they may cancel. */
export function jobsPage(res: Response, frame: Frame, data: JobsData, opts: { done?: unknown; problem?: string; status?: number } = {}): void {
  const id = data.membership.account_id;
  const names = namesOf(data);
  const rows = data.jobs.map((j) => {
    const active = j.status === 'queued' || j.status === 'running';
    return html`<tr>
<td>${TOOL_LABELS[j.tool] ?? j.tool} ${shortId(j.id)}</td>
<td>${names.get(j.project_id) ?? j.project_id}</td>
<td><span class="badge">${j.status}</span></td>
<td class="num"><progress value="${String(Math.min(Math.max(j.progress, 0), 1))}" max="1" aria-label="Progress of job ${j.id}">${percent(j.progress)}</progress> ${percent(j.progress)}</td>
<td>${time(j.created_at)}</td>
<td>${j.finished_at ? time(j.finished_at) : html`<span class="muted">not yet</span>`}</td>
<td>${made(id, j)}</td>
<td>${
      active && data.cancellable.has(j.project_id)
        ? html`<form method="post" action="${accountPath(id, `jobs/${j.id}/cancel`)}"><input type="hidden" name="csrf" value="${frame.csrf}"><button type="submit" class="danger small" aria-label="Cancel job ${j.id}">Cancel</button></form>`
        : null
    }</td>
</tr>`;
  });
  const notice = typeof opts.done === 'string' && NOTICES[opts.done] ? html`<p class="notice" role="status">${NOTICES[opts.done]}</p>` : null;
  const body = html`<h1>Jobs</h1>
${notice}
${opts.problem ? html`<p class="error" role="alert">${opts.problem}</p>` : null}
<p class="muted">Articles and images written by AI for ${data.membership.role === 'owner' ? 'the projects of this account' : 'the projects where you have a role'}, newest first.</p>
${
  data.jobs.length
    ? scrollTable(
        'Jobs',
        html`<table><thead><tr><th scope="col">Job</th><th scope="col">Project</th><th scope="col">Status</th><th scope="col" class="num">Progress</th><th scope="col">Created</th><th scope="col">Finished</th><th scope="col">Made</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`,
      )
    : html`<p>No job yet.</p>`
}
${data.next_cursor ? html`<p><a href="${accountPath(id, 'jobs')}?cursor=${data.next_cursor}">Older jobs</a></p>` : null}`;
  accountPage(res, frame, data, 'jobs', 'Jobs', body, opts.status ?? 200);
}
