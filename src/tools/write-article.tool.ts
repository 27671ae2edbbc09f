import { Injectable } from '@nestjs/common';
import { WRITE_ARTICLE } from '../agents/write-article.job.js';
import { LENGTHS } from '../agents/writer-questions.js';
import { McpTool, ToolReply, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { JobReplies } from './job-replies.js';
import { ARTICLE_VIEW } from '../protocol/views.js';
import { WriterSetup } from './writer-setup.js';

const input = {
  type: 'object',
  properties: {
    brief: { type: 'string', minLength: 1, maxLength: 4000, description: 'What the article should be about, and anything it must say.' },
    title: { type: 'string', minLength: 1, maxLength: 300, description: 'The title to use; the writer proposes one when absent.' },
    length: { type: 'string', enum: [...LENGTHS], description: 'Overrides the configured length.' },
  },
  required: ['brief'],
} as const;

@McpTool({
  name: 'write_article',
  title: 'Write an article draft',
  description:
    'Have the writer agent draft an article from a brief; the result is a draft article (source "ai") in this project. ' +
    'Without a writer config it asks the setup questions through elicitation when the client supports it, else answers status "setup_required" with questions: ask the user, call configure_agent, then call this again. ' +
    'It runs as a job: it answers {"status":"succeeded","job_id","article"} when done in time, else {"status":"running","job_id","poll_after_s"}: then poll get_job.',
  input,
  scope: 'generate',
  role: 'editor',
  projectScoped: true,
  view: ARTICLE_VIEW,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  taskSupport: 'optional',
})
@Injectable()
export class WriteArticleTool {
  constructor(
    private readonly setup: WriterSetup,
    private readonly replies: JobReplies,
  ) {}

  async run(args: ToolArgs<typeof input>, ctx: ToolContext) {
    const config = await this.setup.config(ctx, 'write_article');
    if (config instanceof ToolReply) return ctx.view(config);
    return ctx.view(await this.replies.run(ctx, WRITE_ARTICLE, { ...args, agent_config_version: config.version }));
  }
}
