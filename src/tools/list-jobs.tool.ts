import { Injectable } from '@nestjs/common';
import { JOB_STATUSES } from '../jobs/job.entity.js';
import { JobsService } from '../jobs/jobs.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { JOB_SCHEMA } from './job.schemas.js';
import { PAGE_ARGS, pagedOutput } from './paged.schemas.js';

const input = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: [...JOB_STATUSES] },
    ...PAGE_ARGS,
  },
} as const;

@McpTool({
  name: 'list_jobs',
  title: 'List jobs',
  description:
    'List the jobs (write_article, generate_image) of a project, newest first, optionally by status. Items leave out `result`: read one job with get_job.',
  input,
  output: pagedOutput(JOB_SCHEMA),
  scope: 'read',
  role: 'viewer',
  projectScoped: true,
})
@Injectable()
export class ListJobsTool {
  constructor(private readonly jobs: JobsService) {}

  async run(args: ToolArgs<typeof input>, { principal, project }: ToolContext) {
    const listing = await this.jobs.listPage(principal.accountId, project.id, args);
    return { ...listing, items: listing.items.map(({ result: _result, ...item }) => item) };
  }
}
