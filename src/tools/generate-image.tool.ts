import { Injectable } from '@nestjs/common';
import { ASPECT_RATIOS } from '../ai/ai.types.js';
import { ArticlesService } from '../articles/articles.service.js';
import { GENERATE_IMAGE } from '../media/generate-image.job.js';
import { McpTool, ToolReply, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { JobReplies } from './job-replies.js';
import { WriterSetup } from './writer-setup.js';

const input = {
  type: 'object',
  properties: {
    prompt: { type: 'string', minLength: 1, maxLength: 2000, description: 'What the image should show.' },
    article_id: { type: 'string', minLength: 1, maxLength: 100, description: 'An article of this project to set the image on as its featured image.' },
    aspect_ratio: { type: 'string', enum: ASPECT_RATIOS, default: '16:9' },
  },
  required: ['prompt'],
} as const;

@McpTool({
  name: 'generate_image',
  title: 'Generate an image',
  description:
    "Generate an image from a prompt, in the style of the writer config; with article_id it becomes that article's featured image. " +
    'Without a writer config it asks the setup questions through elicitation when the client supports it, else answers status "setup_required" with questions: ask the user, call configure_agent, then call this again. ' +
    'It runs as a job: done in time, it answers {"status":"succeeded","job_id","media":{"id","url","mime_type","width","height"}} plus the image; ' +
    'else {"status":"running","job_id","poll_after_s"}: then poll get_job.',
  input,
  scope: 'generate',
  role: 'editor',
  projectScoped: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  taskSupport: 'optional',
})
@Injectable()
export class GenerateImageTool {
  constructor(
    private readonly setup: WriterSetup,
    private readonly articles: ArticlesService,
    private readonly replies: JobReplies,
  ) {}

  async run(args: ToolArgs<typeof input>, ctx: ToolContext) {
    const scope = { accountId: ctx.principal.accountId, projectId: ctx.project.id };
    const config = await this.setup.config(ctx, 'generate_image');
    if (config instanceof ToolReply) return config;
    // An unknown article is refused now, not after the image is made.
    if (args.article_id !== undefined) await this.articles.get(scope, { id: args.article_id });
    return this.replies.run(ctx, GENERATE_IMAGE, { ...args, agent_config_version: config.version });
  }
}
