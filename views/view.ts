// The Reblog MCP Apps views (docs/protocol.md#mcp-apps-views), run by the host in a sandboxed iframe.
// Everything they do is a tool call through the host (App.callServerTool): they hold no credential and
// fetch nothing. What a tool result carries for them: the tool's JSON in `structuredContent`, with
// `view` ({project, tools}: the tools this credential may run there, as the server's catalogue says)
// and the featured image as a data: URL in `_meta["reblog/featured_image"]`.
import {
  App,
  PostMessageTransport,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps/app-with-deps';
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { MESSAGES, count, languageOf, type Language, type Messages, type Plural } from './messages.js';

type Json = Record<string, any>;
interface ToolResult {
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Json;
  isError?: boolean;
  _meta?: Json;
}
interface ViewData {
  project: { id: string; name: string };
  tools: string[];
}

const STATUSES = ['draft', 'scheduled', 'published', 'archived'] as const;
const PAGE_SIZE = 10;
const POLL_MS = 1_000;
const IMAGE_META = 'reblog/featured_image';

const root = document.getElementById('root')!;
const app = new App({ name: 'reblog-view', version: '1.0.0' }, {}, { autoResize: true });
/** The host's locale, for dates and numbers (English where Intl does not know it). */
let locale = 'en';
/** The language of the view's own words (views/messages.ts): the host locale's, English otherwise. */
let language: Language = 'en';
let t: Messages = MESSAGES.en;
/** The result on screen, shown again when the host's language changes. */
let shown: ToolResult | null = null;
/** The arguments the tool that opened the view was called with (write_article's brief, list_articles' filter). */
let toolArgs: Json = {};
/** What the articles screen shows, to come back to it from an article. */
let listing: { projectId?: string; status: string; page: number } | null = null;
let epoch = 0;

// ---------- DOM helpers ----------

type Child = Node | string | null | undefined | false;
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Json = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value as EventListener);
    else if (key === 'class') el.className = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

function show(...nodes: Child[]): void {
  root.replaceChildren(...(nodes.filter(Boolean) as Node[]));
}

function formatDate(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  try {
    return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
  } catch {
    return date.toISOString();
  }
}

function num(n: number): string {
  return new Intl.NumberFormat(locale).format(n);
}

function counted(forms: Plural, n: number): string {
  return count(forms, n, language, locale);
}

/** A status in the view's language (one it does not know, as it comes). */
function named(names: Record<string, string>, status: unknown): string {
  return Object.hasOwn(names, String(status)) ? names[String(status)] : String(status);
}

function wordCount(markdown: string): number {
  const text = markdown.replace(/```[\s\S]*?```/g, ' ').replace(/[#>*_`~[\]()!|-]/g, ' ');
  return text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/**
 * What the view may not load or follow by itself: an image from elsewhere (the host's CSP allows data:
 * images only) becomes its description, and a link opens through the host (ui/open-link).
 */
function offline(body: HTMLElement): void {
  for (const img of Array.from(body.querySelectorAll('img[data-offline]'))) {
    const alt = img.getAttribute('alt');
    img.replaceWith(h('span', { class: 'image-placeholder' }, t.image(alt ?? '')));
  }
  for (const link of Array.from(body.querySelectorAll('a[href]'))) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      const url = (link as HTMLAnchorElement).href;
      if (/^https?:/i.test(url)) void app.openLink({ url }).catch(() => undefined);
    });
  }
}

// Sanitising, an image from elsewhere loses its source before it is ever a live element (which would
// start loading it): offline() shows it as its description.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName !== 'IMG') return;
  const el = node as Element;
  if (el.getAttribute('src')?.startsWith('data:') && !el.hasAttribute('srcset')) return;
  el.removeAttribute('src');
  el.removeAttribute('srcset');
  el.setAttribute('data-offline', '');
});

function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status}` }, named(t.status, status));
}

/** The sentence a tool error carries (its JSON `error.message`), or the result's text. */
function errorText(result: ToolResult): string {
  const text = result.content?.find((c) => c.type === 'text')?.text ?? '';
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    return parsed.error?.message ?? text;
  } catch {
    return text || t.callFailed;
  }
}

function alertBox(message: string): HTMLElement {
  return h('p', { class: 'alert', role: 'alert' }, message);
}

/** Calls a tool through the host; a tool error or a refused call becomes an Error with its sentence. */
async function call(name: string, args: Json): Promise<ToolResult> {
  let result: ToolResult;
  try {
    result = (await app.callServerTool({ name, arguments: args })) as ToolResult;
  } catch (err) {
    throw new Error((err as Error).message || t.toolFailed(name));
  }
  if (result.isError) throw new Error(errorText(result));
  return result;
}

/** Runs `work` from a button: the button is busy meanwhile, an error shows next to it. */
function action(button: HTMLButtonElement, status: HTMLElement, work: () => Promise<void>): () => void {
  return () => {
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    status.replaceChildren();
    work()
      .catch((err: Error) => status.replaceChildren(alertBox(err.message)))
      .finally(() => {
        button.disabled = false;
        button.removeAttribute('aria-busy');
      });
  };
}

// ---------- Screens ----------

/** Any tool result the views are linked from, shown on the screen its shape asks for. */
function render(result: ToolResult): void {
  epoch++;
  shown = result;
  if (result.isError) return show(h('h1', {}, 'Reblog'), alertBox(errorText(result)));
  const value = result.structuredContent ?? {};
  const view = value.view as ViewData | undefined;
  if (Array.isArray(value.items) && value.pagination) return articlesScreen(value, view);
  if (value.status === 'setup_required') return setupScreen(value, view);
  if (typeof value.tool === 'string' && 'progress' in value) return jobScreen(value, view, result);
  if (value.status === 'running' && value.job_id) return jobScreen({ id: value.job_id, status: 'running', progress: 0, tool: 'write_article' }, view, result);
  if (value.status === 'succeeded' && value.article) return articleScreen(value.article as Json, view, result._meta?.[IMAGE_META]);
  if (typeof value.body === 'string' && value.id) return articleScreen(value, view, result._meta?.[IMAGE_META]);
  show(h('h1', {}, 'Reblog'), h('p', {}, t.nothingToShow));
}

function projectLine(view: ViewData | undefined): HTMLElement | null {
  return view ? h('p', { class: 'project' }, t.project, h('strong', {}, view.project.name)) : null;
}

function may(view: ViewData | undefined, tool: string): boolean {
  return !!view && view.tools.includes(tool);
}

function articleScreen(article: Json, view: ViewData | undefined, image: string | undefined): void {
  const projectArg = view ? { project_id: view.project.id } : {};
  const status = h('div', { class: 'action-status', 'aria-live': 'polite' });
  const body = h('div', { class: 'article-body' });
  body.innerHTML = DOMPurify.sanitize(marked.parse(String(article.body ?? ''), { async: false }), {
    FORBID_ATTR: ['style'],
    FORBID_TAGS: ['picture', 'video', 'audio', 'source', 'track'],
  });
  offline(body);
  const meta: Child[] = [statusBadge(article.status)];
  if (article.status === 'scheduled') meta.push(h('span', {}, t.scheduledFor(formatDate(article.published_at))));
  else if (article.status === 'published') meta.push(h('span', {}, t.publishedOn(formatDate(article.published_at))));
  else meta.push(h('span', {}, t.updatedOn(formatDate(article.updated_at))));
  meta.push(h('span', {}, counted(t.words, wordCount(String(article.body ?? '')))));

  const actions = h('div', { class: 'actions', role: 'group', 'aria-label': t.articleActions });
  const panel = h('div', { class: 'panel' });
  const refresh = async (result: ToolResult) => render(result);

  if (may(view, 'publish_article') && article.status !== 'published') {
    const publish = h('button', { type: 'button', class: 'primary' }, t.publish) as HTMLButtonElement;
    publish.addEventListener(
      'click',
      action(publish, status, async () => refresh(await call('publish_article', { ...projectArg, id: article.id }))),
    );
    const schedule = h('button', { type: 'button', 'aria-expanded': 'false' }, t.scheduleOpen) as HTMLButtonElement;
    schedule.addEventListener('click', () => {
      schedule.setAttribute('aria-expanded', 'true');
      panel.replaceChildren(scheduleForm(article, projectArg, status, refresh));
      panel.querySelector('input')?.focus();
    });
    actions.append(publish, schedule);
  }
  if (may(view, 'update_article')) {
    const edit = h('button', { type: 'button', 'aria-expanded': 'false' }, t.edit) as HTMLButtonElement;
    edit.addEventListener('click', () => {
      edit.setAttribute('aria-expanded', 'true');
      panel.replaceChildren(editForm(article, projectArg, status, refresh));
      panel.querySelector('input')?.focus();
    });
    actions.append(edit);
  }
  if (may(view, 'generate_image')) {
    const generate = h('button', { type: 'button', 'aria-expanded': 'false' }, t.generateImage) as HTMLButtonElement;
    generate.addEventListener('click', () => {
      generate.setAttribute('aria-expanded', 'true');
      panel.replaceChildren(imageForm(article, view!, status));
      panel.querySelector('input')?.focus();
    });
    actions.append(generate);
  }

  show(
    listing ? backToList(view) : null,
    projectLine(view),
    h(
      'article',
      { 'aria-labelledby': 'article-title' },
      image ? h('img', { class: 'featured', src: image, alt: t.featuredImage(String(article.title)) }) : null,
      h('h1', { id: 'article-title' }, String(article.title)),
      article.excerpt ? h('p', { class: 'excerpt' }, String(article.excerpt)) : null,
      h('p', { class: 'meta' }, ...meta),
      Array.isArray(article.tags) && article.tags.length
        ? h('ul', { class: 'tags', 'aria-label': t.tags }, ...article.tags.map((t: string) => h('li', {}, t)))
        : null,
      actions.childElementCount ? actions : null,
      panel,
      status,
      body,
    ),
  );
}

function scheduleForm(article: Json, projectArg: Json, status: HTMLElement, done: (r: ToolResult) => Promise<void>): HTMLElement {
  const input = h('input', { id: 'schedule-at', type: 'datetime-local', required: true }) as HTMLInputElement;
  const tomorrow = new Date(Date.now() + 86_400_000);
  tomorrow.setSeconds(0, 0);
  input.value = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const submit = h('button', { type: 'submit', class: 'primary' }, t.schedule) as HTMLButtonElement;
  const form = h('form', { class: 'inline-form', 'aria-label': t.scheduleForm }, h('label', { for: 'schedule-at' }, t.publishAt), input, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const at = new Date(input.value);
    if (Number.isNaN(at.getTime())) return status.replaceChildren(alertBox(t.chooseDate));
    action(submit, status, async () => done(await call('publish_article', { ...projectArg, id: article.id, published_at: at.toISOString() })))();
  });
  return form;
}

function editForm(article: Json, projectArg: Json, status: HTMLElement, done: (r: ToolResult) => Promise<void>): HTMLElement {
  const title = h('input', { id: 'edit-title', type: 'text', required: true, maxlength: 300, value: String(article.title) }) as HTMLInputElement;
  const excerpt = h('textarea', { id: 'edit-excerpt', rows: 3, maxlength: 1000 }) as HTMLTextAreaElement;
  excerpt.value = String(article.excerpt ?? '');
  const submit = h('button', { type: 'submit', class: 'primary' }, t.save) as HTMLButtonElement;
  const form = h(
    'form',
    { class: 'stack-form', 'aria-label': t.edit },
    h('label', { for: 'edit-title' }, t.title),
    title,
    h('label', { for: 'edit-excerpt' }, t.excerpt),
    excerpt,
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    action(submit, status, async () =>
      done(await call('update_article', { ...projectArg, id: article.id, version: article.version, title: title.value, excerpt: excerpt.value })),
    )();
  });
  return form;
}

function imageForm(article: Json, view: ViewData, status: HTMLElement): HTMLElement {
  const prompt = h('input', { id: 'image-prompt', type: 'text', required: true, maxlength: 2000, value: String(article.title) }) as HTMLInputElement;
  const submit = h('button', { type: 'submit', class: 'primary' }, t.generate) as HTMLButtonElement;
  const form = h('form', { class: 'inline-form', 'aria-label': t.generateImage }, h('label', { for: 'image-prompt' }, t.imageOf), prompt, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    action(submit, status, async () => {
      const projectArg = { project_id: view.project.id };
      const result = await call('generate_image', { ...projectArg, prompt: prompt.value, article_id: article.id });
      const value = result.structuredContent ?? {};
      if (value.status === 'setup_required') return render(result);
      if (value.status === 'running' && may(view, 'get_job')) await follow(String(value.job_id), status);
      render(await call('get_article', { ...projectArg, id: article.id }));
    })();
  });
  return form;
}

function progressBar(fraction: number, label: string): HTMLElement {
  const pct = Math.round(Math.max(0, Math.min(1, fraction)) * 100);
  return h('div', { class: 'progress' }, h('label', { for: 'job-progress' }, label), h('progress', { id: 'job-progress', max: 100, value: pct }, `${pct}%`));
}

/** Polls get_job until the job ends, showing its progress in `where`; answers its last result. */
async function follow(jobId: string, where: HTMLElement): Promise<ToolResult> {
  const mine = epoch;
  for (;;) {
    const result = await call('get_job', { job_id: jobId });
    const job = result.structuredContent ?? {};
    if (mine !== epoch) return result;
    if (job.status !== 'queued' && job.status !== 'running') return result;
    where.replaceChildren(progressBar(Number(job.progress ?? 0), `${job.tool ?? t.job}: ${named(t.jobStatus, job.status)}`));
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function jobScreen(job: Json, view: ViewData | undefined, result: ToolResult): void {
  if (job.status === 'succeeded' && job.result?.article) return articleScreen(job.result.article, view, result._meta?.[IMAGE_META]);
  if (job.status === 'failed' || job.status === 'cancelled') {
    const ended = job.status as 'failed' | 'cancelled';
    return show(h('h1', {}, t.jobEnded[ended]), alertBox(job.error?.message ?? t.jobEndedText[ended](String(job.tool))));
  }
  if (job.status === 'succeeded') {
    // An image job: its image comes as the result's MCP image block.
    const block = result.content?.find((c) => c.type === 'image') as { data?: string; mimeType?: string } | undefined;
    const image = block?.data && block.mimeType?.startsWith('image/') ? `data:${block.mimeType};base64,${block.data}` : null;
    return show(
      projectLine(view),
      h('h1', {}, t.imageReady),
      image ? h('img', { class: 'featured', src: image, alt: t.imageMade(String(job.tool)) }) : h('p', {}, t.jobSucceeded(String(job.tool))),
    );
  }
  const where = h('div', {}, progressBar(Number(job.progress ?? 0), `${job.tool}: ${named(t.jobStatus, job.status)}`));
  show(h('h1', {}, job.tool === 'write_article' ? t.writing : t.working), where);
  if (!may(view, 'get_job')) return;
  follow(String(job.id), where)
    .then((last) => render(last))
    .catch((err: Error) => where.replaceChildren(alertBox(err.message)));
}

function setupScreen(setup: Json, view: ViewData | undefined): void {
  const canSave = may(view, 'configure_agent') && may(view, 'write_article');
  const status = h('div', { class: 'action-status', 'aria-live': 'polite' });
  const fields: Child[] = [];
  for (const q of (setup.questions ?? []) as Json[]) {
    const id = `q-${q.id}`;
    let input: HTMLInputElement | HTMLSelectElement;
    if (Array.isArray(q.options)) {
      input = h(
        'select',
        { id, name: q.id },
        ...q.options.map((o: string) => h('option', { value: o, selected: o === q.proposed_answer }, o)),
      ) as HTMLSelectElement;
    } else {
      input = h('input', { id, name: q.id, type: 'text', value: q.proposed_answer ?? '', maxlength: q.maxLength ?? 1000 }) as HTMLInputElement;
    }
    input.disabled = !canSave;
    fields.push(h('div', { class: 'field' }, h('label', { for: id }, String(q.question)), input));
  }
  const submit = h('button', { type: 'submit', class: 'primary' }, t.saveAndWrite) as HTMLButtonElement;
  const form = h('form', { class: 'stack-form', 'aria-labelledby': 'setup-title' }, ...fields, canSave ? submit : null, status);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    action(submit, status, async () => {
      const answers: Json = {};
      for (const el of Array.from(form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select'))) {
        if (el.value.trim() !== '') answers[el.name] = el.value.trim();
      }
      const projectArg = view ? { project_id: view.project.id } : {};
      await call('configure_agent', { ...projectArg, agent: 'writer', answers });
      status.replaceChildren(h('p', {}, t.savedWriting));
      const { project_id: _ignored, ...args } = toolArgs;
      render(await call('write_article', { ...projectArg, ...args }));
    })();
  });
  show(projectLine(view), h('h1', { id: 'setup-title' }, t.setupTitle), h('p', {}, canSave ? t.setupIntro : t.setupReadOnly), form);
}

function backToList(view: ViewData | undefined): HTMLElement {
  const back = h('button', { type: 'button', class: 'link' }, t.allArticles) as HTMLButtonElement;
  back.addEventListener('click', () => void loadList(view?.project.id, listing!.status, listing!.page, h('div')));
  return back;
}

async function loadList(projectId: string | undefined, status: string, page: number, where: HTMLElement): Promise<void> {
  try {
    const args: Json = { page, page_size: PAGE_SIZE, ...(projectId ? { project_id: projectId } : {}), ...(status ? { status } : {}) };
    const result = await call('list_articles', args);
    listing = { projectId, status, page };
    render(result);
  } catch (err) {
    where.replaceChildren(alertBox((err as Error).message));
  }
}

function articlesScreen(value: Json, view: ViewData | undefined): void {
  const projectId = view?.project.id;
  const current = listing ?? { projectId, status: typeof toolArgs.status === 'string' ? toolArgs.status : '', page: value.pagination.page };
  listing = { ...current, projectId, page: value.pagination.page };
  const status = h('div', { class: 'action-status', 'aria-live': 'polite' });
  const filter = h(
    'select',
    { id: 'status-filter' },
    h('option', { value: '' }, t.all),
    ...STATUSES.map((s) => h('option', { value: s, selected: s === listing!.status }, t.status[s])),
  ) as HTMLSelectElement;
  filter.addEventListener('change', () => void loadList(projectId, filter.value, 1, status));

  const rows = (value.items as Json[]).map((a) => {
    const open = h('button', { type: 'button', class: 'link' }, String(a.title)) as HTMLButtonElement;
    open.addEventListener(
      'click',
      action(open, status, async () => render(await call('get_article', { ...(projectId ? { project_id: projectId } : {}), id: a.id }))),
    );
    return h(
      'tr',
      {},
      h('td', {}, open, h('span', { class: 'sub' }, String(a.excerpt ?? ''))),
      h('td', {}, statusBadge(a.status)),
      h('td', { class: 'nowrap' }, formatDate(a.status === 'scheduled' || a.status === 'published' ? a.published_at : a.updated_at)),
    );
  });
  const { page, pages, total } = value.pagination;
  const prev = h('button', { type: 'button', disabled: page <= 1 }, t.previous) as HTMLButtonElement;
  prev.addEventListener('click', () => void loadList(projectId, listing!.status, page - 1, status));
  const next = h('button', { type: 'button', disabled: page >= pages }, t.next) as HTMLButtonElement;
  next.addEventListener('click', () => void loadList(projectId, listing!.status, page + 1, status));

  show(
    projectLine(view),
    h('h1', {}, t.articles),
    h('div', { class: 'toolbar' }, h('label', { for: 'status-filter' }, t.statusLabel), filter),
    rows.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h('caption', { class: 'visually-hidden' }, t.articles),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t.title), h('th', { scope: 'col' }, t.statusLabel), h('th', { scope: 'col' }, t.date))),
            h('tbody', {}, ...rows),
          ),
        )
      : h('p', {}, t.noArticles),
    h(
      'nav',
      { class: 'pager', 'aria-label': t.pages },
      prev,
      h('span', {}, `${t.pageOf(num(page), num(Math.max(pages, 1)))} · ${counted(t.articleCount, total)}`),
      next,
    ),
    status,
  );
}

// ---------- Host ----------

function applyContext(context: McpUiHostContext | undefined): void {
  if (!context) return;
  if (context.theme) applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
  if (context.styles?.css?.fonts) applyHostFonts(context.styles.css.fonts);
  if (typeof context.locale === 'string' && context.locale) useLocale(context.locale);
}

/**
 * Takes the host's locale: the words in its language where the view has a table for it (`fr-CA` →
 * French), English otherwise; dates and numbers as the locale writes them where Intl knows it, English
 * otherwise. A change of language shows the current screen again in the new one.
 */
function useLocale(tag: string): void {
  let canonical = 'en';
  try {
    canonical = Intl.getCanonicalLocales(tag)[0] ?? 'en';
  } catch {
    // Not a locale: English.
  }
  const before = `${language} ${locale}`;
  locale = Intl.DateTimeFormat.supportedLocalesOf([canonical]).length ? canonical : 'en';
  language = languageOf(canonical);
  t = MESSAGES[language];
  document.documentElement.lang = language;
  if (shown && before !== `${language} ${locale}`) render(shown);
}

/** Starts the view: connects to the host, then shows each tool result the host sends. */
export function start(): void {
  app.ontoolinput = (params) => {
    toolArgs = (params.arguments as Json | undefined) ?? {};
  };
  app.ontoolresult = (result) => render(result as ToolResult);
  app.onhostcontextchanged = (context) => applyContext(context);
  app.onteardown = async () => ({});
  app
    .connect(new PostMessageTransport(window.parent, window.parent))
    .then(() => applyContext(app.getHostContext()))
    .catch((err: Error) => show(h('h1', {}, 'Reblog'), alertBox(t.unreachableHost(err.message))));
}
