import { Injectable } from '@nestjs/common';
import { AgentsService } from '../agents/agents.service.js';
import { WRITER_ANSWERS_SCHEMA } from '../agents/writer-questions.js';
import { McpTool, type ToolArgs, type ToolContext } from '../protocol/mcp-tool.decorator.js';
import { AGENT_CONFIG_SCHEMA } from './job.schemas.js';

const input = {
  type: 'object',
  properties: {
    agent: { type: 'string', enum: ['writer'], description: 'The agent to configure.' },
    answers: WRITER_ANSWERS_SCHEMA,
  },
  required: ['agent', 'answers'],
} as const;

@McpTool({
  name: 'configure_agent',
  title: 'Configure an agent',
  description:
    'Save the answers to the setup questions of an agent (today: "writer") for this project, as a new config version. ' +
    'Call it after write_article or generate_image answered status "setup_required", with the answers the user gave, then call that tool again. ' +
    'Answers not given keep their value from the previous version.',
  input,
  output: AGENT_CONFIG_SCHEMA,
  scope: 'write',
  role: 'editor',
  projectScoped: true,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
})
@Injectable()
export class ConfigureAgentTool {
  constructor(private readonly agents: AgentsService) {}

  run(args: ToolArgs<typeof input>, { principal, project }: ToolContext) {
    return this.agents.configure({ accountId: principal.accountId, projectId: project.id }, args.agent, args.answers, principal.credential.id);
  }
}
