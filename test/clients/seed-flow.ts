import assert from 'node:assert/strict';

// The seed flow every client library of test/clients walks, unpaced (each call as soon as the one
// before answered), as an agent new to a project would: list the tools, find the project and its
// articles, create one and read it back, ask the writer for an article (setup_required first, then
// configure_agent and again), follow its job, generate an image, read a resource, get a prompt.
//
// One description, two runtimes: the Jest suite imports this file (compiled by SWC), and the flows
// of test/clients/flows/*.mjs, which run under Node 24, import it as TypeScript (Node strips the
// types): so it imports nothing but Node's own modules, and uses only erasable TypeScript syntax.

/** How one library connects and calls: the only thing each client's file writes. */
export interface SeedClient {
  /** The names of the tools the library lists. */
  listTools(): Promise<string[]>;
  /** Calls a tool and answers the JSON value of its text block; a tool error (isError) throws. */
  callTool(name: string, args: Record<string, unknown>): Promise<any>;
  /** The contents of a resource read, when the library reads resources. */
  readResource?: (uri: string) => Promise<{ uri: string; mimeType?: string; text?: string }[]>;
  /** The messages of a prompt, when the library gets prompts. */
  getPrompt?: (name: string, args: Record<string, string>) => Promise<{ role: string; content: any }[]>;
}

/** What the flow knows beforehand: the tenant's one project. */
export interface SeedContext {
  projectId: string;
}

/** One step as it went: `skipped` when the library offers no way to take it. */
export interface StepResult {
  step: string;
  outcome: 'ok' | 'skipped';
}

/** The step that failed, and why, in one line. */
export class SeedFlowError extends Error {
  readonly step: string;
  readonly done: StepResult[];
  constructor(step: string, cause: unknown, done: StepResult[]) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`step "${step}" failed after ${done.length} step(s) passed: ${why.replace(/\s+/g, ' ').slice(0, 600)}`);
    this.name = 'SeedFlowError';
    this.step = step;
    this.done = done;
  }
}

/** The tools the flow calls: every one must be listed. */
export const SEED_TOOLS = ['list_projects', 'list_articles', 'create_article', 'get_article', 'write_article', 'configure_agent', 'get_job', 'generate_image'];

/** The step names, in order. */
export const SEED_STEPS = [
  'tools/list',
  'list_projects',
  'list_articles',
  'create_article',
  'get_article',
  'write_article → setup_required',
  'configure_agent',
  'write_article',
  'get_job',
  'generate_image',
  'a resource',
  'a prompt',
] as const;

const WRITER_ANSWERS = {
  audience: 'Home cooks',
  tone: 'Warm',
  language: 'en',
  topics: 'bread, baking',
  length: 'short',
  banned_words: '',
  image_style: 'watercolour',
};
const TITLE = 'Sourdough at home';
const BODY = 'A starter, flour, water and salt: everything a loaf needs, and a week of patience.';

/**
 * Walks the seed flow with `client`; answers every step's outcome, or throws a {@link SeedFlowError}
 * naming the first step that failed.
 */
export async function runSeedFlow(client: SeedClient, ctx: SeedContext): Promise<StepResult[]> {
  const done: StepResult[] = [];
  const step = async (name: (typeof SEED_STEPS)[number], run: () => Promise<'ok' | 'skipped' | void>) => {
    try {
      done.push({ step: name, outcome: (await run()) ?? 'ok' });
    } catch (err) {
      throw new SeedFlowError(name, err, done);
    }
  };
  let article: any;
  let jobId = '';

  await step('tools/list', async () => {
    const names = await client.listTools();
    for (const tool of SEED_TOOLS) assert.ok(names.includes(tool), `tools/list has no ${tool}: ${names.join(', ')}`);
  });
  await step('list_projects', async () => {
    const projects = await client.callTool('list_projects', {});
    assert.deepEqual(
      projects.items.map((p: { id: string }) => p.id),
      [ctx.projectId],
    );
  });
  await step('list_articles', async () => {
    const page = await client.callTool('list_articles', { page_size: 5 });
    assert.deepEqual(page.pagination, { total: 0, page: 1, page_size: 5, pages: 0 });
  });
  await step('create_article', async () => {
    article = await client.callTool('create_article', { title: TITLE, body: BODY, tags: ['bread'] });
    assert.equal(article.title, TITLE);
    assert.equal(article.status, 'draft');
    assert.equal(article.project_id, ctx.projectId);
  });
  await step('get_article', async () => {
    const read = await client.callTool('get_article', { id: article.id });
    assert.equal(read.id, article.id);
    assert.equal(read.body, BODY);
  });
  await step('write_article → setup_required', async () => {
    const setup = await client.callTool('write_article', { brief: 'Why a sourdough starter needs feeding' });
    assert.equal(setup.status, 'setup_required', `expected setup_required, got ${JSON.stringify(setup).slice(0, 200)}`);
    assert.equal(setup.agent, 'writer');
    assert.deepEqual(
      setup.questions.map((q: { id: string }) => q.id),
      Object.keys(WRITER_ANSWERS),
    );
  });
  await step('configure_agent', async () => {
    const saved = await client.callTool('configure_agent', { agent: 'writer', answers: WRITER_ANSWERS });
    assert.equal(saved.agent, 'writer');
    assert.equal(saved.config.version, 1);
  });
  await step('write_article', async () => {
    const written = await client.callTool('write_article', { brief: 'Why a sourdough starter needs feeding' });
    assert.equal(written.status, 'succeeded', `expected succeeded, got ${JSON.stringify(written).slice(0, 200)}`);
    assert.equal(written.article.source, 'ai');
    assert.equal(written.article.status, 'draft');
    jobId = written.job_id;
  });
  await step('get_job', async () => {
    const job = await client.callTool('get_job', { job_id: jobId });
    assert.equal(job.id, jobId);
    assert.equal(job.tool, 'write_article');
    assert.equal(job.status, 'succeeded');
  });
  await step('generate_image', async () => {
    const image = await client.callTool('generate_image', { prompt: 'A loaf on a board', article_id: article.id });
    assert.equal(image.status, 'succeeded', `expected succeeded, got ${JSON.stringify(image).slice(0, 200)}`);
    assert.equal(image.media.mime_type, 'image/png');
    assert.equal(image.article_id, article.id);
  });
  await step('a resource', async () => {
    if (!client.readResource) return 'skipped';
    const uri = `reblog://projects/${ctx.projectId}/articles/${article.handle}`;
    const contents = await client.readResource(uri);
    assert.equal(contents.length, 1);
    assert.equal(contents[0].mimeType, 'text/markdown');
    assert.ok(contents[0].text?.includes(TITLE), `the resource does not hold the title: ${contents[0].text?.slice(0, 200)}`);
  });
  await step('a prompt', async () => {
    if (!client.getPrompt) return 'skipped';
    const messages = await client.getPrompt('draft_article', { topic: 'Rye bread' });
    assert.ok(messages.length > 0, 'the prompt has no messages');
    assert.ok(JSON.stringify(messages).includes('Rye bread'), 'the prompt does not name its topic');
  });
  return done;
}

/** The JSON value of a tool result's text block (the shape every MCP library hands back); a tool error throws its text. */
export function toolValue(result: object): any {
  const { content, isError } = result as { content?: unknown; isError?: unknown };
  const blocks = (Array.isArray(content) ? content : []) as { type: string; text?: string }[];
  const text = blocks.find((b) => b.type === 'text')?.text;
  if (isError) throw new Error(`tool error: ${text ?? JSON.stringify(result).slice(0, 300)}`);
  if (text === undefined) throw new Error(`no text block in ${JSON.stringify(result).slice(0, 300)}`);
  return JSON.parse(text);
}
