import { Injectable } from '@nestjs/common';
import { AgentsService } from '../agents/agents.service.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { AGENT_CONFIG_SCHEMA } from './job.schemas.js';

const input = {
  type: 'object',
  properties: { agent: { type: 'string', enum: ['writer'], default: 'writer', description: 'The agent.' } },
} as const;

@McpTool({
  name: 'get_agent_config',
  title: 'Get an agent config',
  description: 'Read the current config of an agent (default "writer") of this project: its version and answers, or null when it was never configured.',
  input,
  output: AGENT_CONFIG_SCHEMA,
  scope: 'read',
  role: 'viewer',
  projectScoped: true,
})
@Injectable()
export class GetAgentConfigTool {
  constructor(private readonly agents: AgentsService) {}

  run(args: ToolArgs<typeof input>, { principal, project }: ToolContext) {
    return this.agents.get({ accountId: principal.accountId, projectId: project.id }, args.agent);
  }
}
