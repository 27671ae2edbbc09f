import { Injectable } from '@nestjs/common';
import { JobsService, jobView } from '../jobs/jobs.service.js';
import { McpTool, ToolReply, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { JobReplies } from './job-replies.js';
import { JOB_SCHEMA } from './job.schemas.js';
import { ARTICLE_VIEW } from '../protocol/views.js';

const input = {
  type: 'object',
  properties: { job_id: { type: 'string', minLength: 1, maxLength: 100, description: 'The job id a tool answered.' } },
  required: ['job_id'],
} as const;

@McpTool({
  name: 'get_job',
  title: 'Get a job',
  description:
    'Read a job started by write_article or generate_image: status (queued, running, succeeded, failed, cancelled), progress (0..1), ' +
    'and once finished its result (what the tool would have answered; an image job also returns the image) or its error.',
  input,
  output: JOB_SCHEMA,
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  view: ARTICLE_VIEW,
})
@Injectable()
export class GetJobTool {
  constructor(
    private readonly jobs: JobsService,
    private readonly replies: JobReplies,
  ) {}

  async run(args: ToolArgs<typeof input>, ctx: ToolContext) {
    const { principal, allowedProjects } = ctx;
    // The job names its project: only projects where this credential may run get_job reach it.
    const job = await this.jobs.get(
      principal.accountId,
      allowedProjects.map((p) => p.id),
      args.job_id,
    );
    const reply = new ToolReply(jobView(job) as unknown as Record<string, unknown>, await this.replies.imageContent(job));
    return ctx.view(reply, job.project_id);
  }
}
