import { Injectable } from '@nestjs/common';
import { AgentsService, type AgentConfigVersion, type SetupRequired } from '../agents/agents.service.js';
import { WRITER_QUESTIONS, type WriterAnswers } from '../agents/writer-questions.js';
import { DomainError } from '../common/domain-error.js';
import { ToolReply, type ElicitParams, type ElicitProperty, type ToolContext } from '../protocol/mcp-tool.decorator.js';

/** Questions that may be left empty. */
const OPTIONAL = new Set(['banned_words']);

/**
 * The writer config a writing tool (`write_article`, `generate_image`) works with. Without one, a
 * client that supports elicitation, used by a credential that could run `configure_agent` in the
 * project, is asked the setup questions as one form (the proposed answers as defaults); the answers are
 * saved as `configure_agent` would and the tool goes on. Otherwise — no elicitation, no right to
 * configure, or the user declined or cancelled — the tool answers `setup_required` (docs/protocol.md#the-writer-setup-handshake). A
 * 2026-07-28 client is asked with an `input_required` result; its retry carries the answers.
 */
@Injectable()
export class WriterSetup {
  constructor(private readonly agents: AgentsService) {}

  async config(ctx: ToolContext, tool: string): Promise<AgentConfigVersion | ToolReply> {
    const scope = { accountId: ctx.principal.accountId, projectId: ctx.project.id };
    const { config } = await this.agents.get(scope, 'writer');
    if (config) return config;
    const setup = await this.agents.setupRequired(scope, ctx.project);
    if (ctx.canAsk('elicitation/create') && ctx.mayRun('configure_agent')) {
      // 2025: one form over the call's stream; 2026-07-28: input_required (recorded as setup_required), then the retry goes on.
      const { writer_setup: answer } = await ctx.ask(
        { writer_setup: { method: 'elicitation/create', params: setupForm(setup, ctx.project.name, tool) } },
        { outcome: 'setup_required' },
      );
      if (answer?.action === 'accept') {
        const answers = withProposals(answer.content ?? {}, setup);
        const saved = await this.agents.configure(scope, 'writer', answers, ctx.principal.credential.id);
        return saved.config!;
      }
    }
    return ToolReply.withOutcome('setup_required', setup);
  }
}

/** The setup questions as one elicitation form: free text bounded like configure_agent, `length` as an enum, proposals as defaults. */
export function setupForm(setup: SetupRequired, projectName: string, tool: string): ElicitParams {
  const properties: Record<string, ElicitProperty> = {};
  for (const q of WRITER_QUESTIONS) {
    const proposed = setup.questions.find((p) => p.id === q.id)?.proposed_answer ?? null;
    properties[q.id] = {
      type: 'string',
      title: q.question,
      ...(q.options ? { enum: [...q.options] } : { maxLength: q.maxLength }),
      ...(proposed !== null ? { default: proposed } : {}),
    };
  }
  return {
    message: `Project "${projectName}" has no writer configured yet, so ${tool} cannot start. Answer these questions (the proposed answers come from the project's own articles); they are saved as the project's writer config and ${tool} goes on.`,
    requestedSchema: { type: 'object', properties, required: WRITER_QUESTIONS.filter((q) => !OPTIONAL.has(q.id)).map((q) => q.id) },
  };
}

/** The form's answers, with a proposal standing for an answer left out; still missing a required one is an error naming it. */
function withProposals(content: Record<string, unknown>, setup: SetupRequired): WriterAnswers {
  const answers = { ...content } as WriterAnswers;
  for (const q of setup.questions) {
    if (answers[q.id] !== undefined) continue;
    if (q.proposed_answer !== null) answers[q.id] = q.proposed_answer;
    else if (!OPTIONAL.has(q.id))
      throw new DomainError(
        'invalid_arguments',
        `The setup form came back without an answer to "${q.id}" (${q.question}); nothing was saved. Call the tool again and answer it.`,
      );
  }
  return answers;
}
