import { Injectable } from '@nestjs/common';
import { DomainError } from '../../src/common/domain-error.js';
import { RpcError } from '../../src/protocol/json-rpc.js';
import { type ElicitParams, type InputRequest } from '../../src/protocol/input.js';
import { McpTool, type ToolContext, type ToolDefinition } from '../../src/protocol/mcp-tool.decorator.js';
import { McpPrompt, type McpPromptHandler, type PromptContext, type PromptDefinition } from '../../src/prompts/mcp-prompt.decorator.js';
import { text } from './content-reply.js';

/**
 * The fixtures of the 2026-07-28 input-required-result-* scenarios (SEP-2322, "MRTR") and of
 * server-stateless's `test_streaming_elicitation`, written against the product's one way to ask the
 * client (`ctx.ask`): in 2026-07-28 an unanswered question is an `input_required` result and the
 * retry carries the answers (and the signed requestState); in 2025 the same fixtures ask over the
 * call's event stream. Registered only by the conformance entry point, never by the product's build.
 */

const NO_ARGUMENTS = { type: 'object', properties: {} } as const;

function fixture(name: string, description: string): ToolDefinition<typeof NO_ARGUMENTS> {
  return { name, title: name, description, input: NO_ARGUMENTS, scope: 'read', role: 'viewer', projectScoped: false, annotations: { readOnlyHint: true } };
}

function form(
  message: string,
  properties: ElicitParams['requestedSchema']['properties'],
  required = Object.keys(properties),
): { method: 'elicitation/create'; params: ElicitParams } {
  return { method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties, required } } };
}

function sampling(prompt: string, maxTokens: number): { method: 'sampling/createMessage'; params: Record<string, unknown> } {
  return { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens } };
}

const ROOTS = { method: 'roots/list', params: {} } as const satisfies InputRequest;

/** A capability the fixture cannot do without: -32021 in 2026-07-28, a tool error in 2025 (which has no such error). */
function requireCapability(ctx: ToolContext, capability: 'elicitation' | 'sampling' | 'roots'): void {
  const method = capability === 'elicitation' ? 'elicitation/create' : capability === 'sampling' ? 'sampling/createMessage' : 'roots/list';
  if (ctx.canAsk(method)) return;
  if (ctx.era === 'modern') throw RpcError.missingCapability({ [capability]: {} });
  throw new DomainError(
    'unavailable',
    `This client cannot be asked (${capability}): it declared no such capability, has no session, or does not accept an event stream.`,
  );
}

/** What the user answered in field `field` of an elicitation, or what they did instead. */
function field(answer: { action: string; content?: Record<string, unknown> } | null, name: string): string {
  if (answer === null) return '(not asked)';
  return answer.action === 'accept' ? String(answer.content?.[name]) : `(${answer.action})`;
}

function sampled(answer: Record<string, unknown> | null): string {
  const content = answer?.content as { type?: string; text?: unknown } | undefined;
  return content?.type === 'text' && typeof content.text === 'string' ? content.text : 'no response';
}

const NAME_FORM = form('What is your name?', { name: { type: 'string' } });

@McpTool(fixture('test_input_required_result_elicitation', 'Conformance fixture (MRTR): asks the user for their name (elicitation), then greets them.'))
@Injectable()
export class InputRequiredElicitationFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'elicitation');
    const { user_name } = await ctx.ask({ user_name: NAME_FORM });
    return text(user_name?.action === 'accept' ? `Hello, ${field(user_name, 'name')}!` : `No name given ${field(user_name, 'name')}.`);
  };
}

@McpTool(fixture('test_input_required_result_sampling', 'Conformance fixture (MRTR): asks the client to sample an LLM, then answers with its text.'))
@Injectable()
export class InputRequiredSamplingFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'sampling');
    const { capital_question } = await ctx.ask({ capital_question: sampling('What is the capital of France?', 100) });
    return text(`Sampling result: ${sampled(capital_question)}`);
  };
}

@McpTool(fixture('test_input_required_result_list_roots', 'Conformance fixture (MRTR): asks the client for its roots, then counts them.'))
@Injectable()
export class InputRequiredListRootsFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'roots');
    const { client_roots } = await ctx.ask({ client_roots: ROOTS });
    return text(`Found ${client_roots?.roots.length ?? 0} root(s)`);
  };
}

const CONFIRM_FORM = form('Please confirm', { ok: { type: 'boolean' } });

@McpTool(
  fixture(
    'test_input_required_result_request_state',
    'Conformance fixture (MRTR): asks for a confirmation with a signed requestState, and checks it on the retry.',
  ),
)
@Injectable()
export class InputRequiredRequestStateFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'elicitation');
    const { confirm } = await ctx.ask({ confirm: CONFIRM_FORM });
    return text(confirm?.action === 'accept' && confirm.content?.ok === true ? 'state-ok: requestState validated' : `not confirmed ${field(confirm, 'ok')}`);
  };
}

@McpTool(fixture('test_input_required_result_multiple_inputs', 'Conformance fixture (MRTR): asks for a name, a sampled greeting and the roots at once.'))
@Injectable()
export class InputRequiredMultipleInputsFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'elicitation');
    requireCapability(ctx, 'sampling');
    requireCapability(ctx, 'roots');
    const answers = await ctx.ask({ user_name: NAME_FORM, greeting: sampling('Generate a greeting', 50), client_roots: ROOTS });
    return text(`Name: ${field(answers.user_name, 'name')}; Greeting: ${sampled(answers.greeting)}; Roots: ${answers.client_roots?.roots.length ?? 0}`);
  };
}

@McpTool(fixture('test_input_required_result_multi_round', 'Conformance fixture (MRTR): asks for a name, then (a second round) for a favourite colour.'))
@Injectable()
export class InputRequiredMultiRoundFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'elicitation');
    const { step1 } = await ctx.ask({ step1: form('Step 1: What is your name?', { name: { type: 'string' } }) });
    const { step2 } = await ctx.ask({ step2: form('Step 2: What is your favorite color?', { color: { type: 'string' } }) });
    return text(`Multi-round complete for ${field(step1, 'name')} who likes ${field(step2, 'color')}`);
  };
}

@McpTool(fixture('test_input_required_result_tampered_state', 'Conformance fixture (MRTR): a signed requestState; a tampered one is refused with -32602.'))
@Injectable()
export class InputRequiredTamperedStateFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'elicitation');
    const { confirm } = await ctx.ask({ confirm: CONFIRM_FORM });
    return text(`integrity-ok: state verified (${field(confirm, 'ok')})`);
  };
}

@McpTool(fixture('test_input_required_result_capabilities', 'Conformance fixture (MRTR): asks only through the capabilities the request declared.'))
@Injectable()
export class InputRequiredCapabilitiesFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    const requests: Record<string, InputRequest> = {};
    if (ctx.canAsk('elicitation/create')) requests.elicit_input = form('Elicitation input', { value: { type: 'string' } });
    if (ctx.canAsk('sampling/createMessage')) requests.sample_input = sampling('Sample request', 50);
    if (Object.keys(requests).length === 0) return text('No supported capabilities declared');
    const answers = await ctx.ask(requests);
    return text(`capabilities-ok: received ${Object.keys(answers).join(',')}`);
  };
}

@McpTool(
  fixture(
    'test_streaming_elicitation',
    'Conformance fixture: asks for a confirmation (needs elicitation); in 2026-07-28 as input_required, never as a request on the stream.',
  ),
)
@Injectable()
export class StreamingElicitationFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireCapability(ctx, 'elicitation');
    const { confirm } = await ctx.ask({ confirm: form('Continue the streaming elicitation?', { confirm: { type: 'boolean' } }) });
    return text(`Streaming elicitation complete: ${field(confirm, 'confirm')}`);
  };
}

const PROMPT: PromptDefinition = {
  name: 'test_input_required_result_prompt',
  title: 'Prompt that asks for input',
  description: 'Conformance fixture (MRTR): prompts/get asks the user for the context the prompt uses.',
  arguments: [],
  needs: [],
};

@McpPrompt(PROMPT)
@Injectable()
export class InputRequiredPromptFixture implements McpPromptHandler {
  async get(_args: unknown, ctx: PromptContext) {
    const { user_context } = await ctx.ask({ user_context: form('What context should the prompt use?', { context: { type: 'string' } }) });
    const context = user_context?.action === 'accept' ? String(user_context.content?.context) : 'none given';
    return { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: `Prompt with context: ${context}` } }] };
  }
}

export const MRTR_FIXTURES = [
  InputRequiredElicitationFixture,
  InputRequiredSamplingFixture,
  InputRequiredListRootsFixture,
  InputRequiredRequestStateFixture,
  InputRequiredMultipleInputsFixture,
  InputRequiredMultiRoundFixture,
  InputRequiredTamperedStateFixture,
  InputRequiredCapabilitiesFixture,
  StreamingElicitationFixture,
  InputRequiredPromptFixture,
];
