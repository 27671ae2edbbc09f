import { Injectable } from '@nestjs/common';
import { CANCEL_JOB } from '../jobs/cancel-rule.js';
import { JobsService, jobView } from '../jobs/jobs.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { JOB_SCHEMA } from './job.schemas.js';

const input = {
  type: 'object',
  properties: { job_id: { type: 'string', minLength: 1, maxLength: 100, description: 'The job id a tool answered.' } },
  required: ['job_id'],
} as const;

@McpTool({
  name: 'cancel_job',
  title: 'Cancel a job',
  description:
    'Cancel a queued or running job: it stops and writes nothing more. Answers the job, now "cancelled"; a job that already finished cannot be cancelled.',
  input,
  output: JOB_SCHEMA,
  // Who may cancel: the jobs' own rule, which the console's Cancel button follows too.
  scope: CANCEL_JOB.scope,
  role: CANCEL_JOB.role,
  projectScoped: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
})
@Injectable()
export class CancelJobTool {
  constructor(private readonly jobs: JobsService) {}

  async run(args: ToolArgs<typeof input>, { principal, allowedProjects }: ToolContext) {
    // Where the credential's role is too low for cancel_job, the job is as unknown as another tenant's.
    const job = await this.jobs.cancel(
      principal.accountId,
      allowedProjects.map((p) => p.id),
      args.job_id,
    );
    return jobView(job);
  }
}
