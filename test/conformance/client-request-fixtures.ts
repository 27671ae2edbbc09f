import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '../../src/common/domain-error.js';
import { McpTool, type ElicitParams, type ElicitResult, type ToolArgs, type ToolContext, type ToolDefinition } from '../../src/protocol/mcp-tool.decorator.js';
import { text } from './content-reply.js';

/**
 * The fixture tools of the conformance scenarios about logging, sampling and elicitation
 * (tools-call-with-logging, tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
 * elicitation-sep1330-enums), through the product's own ToolContext: `log` and `ask`.
 * Registered only by the conformance entry point, never by the product's build.
 */

const NO_ARGUMENTS = { type: 'object', properties: {} } as const;

function fixture<const Input extends ToolDefinition['input']>(name: string, title: string, description: string, input: Input): ToolDefinition<Input> {
  return { name, title, description, input, scope: 'read', role: 'viewer', projectScoped: false, annotations: { readOnlyHint: true } };
}

/** Elicitation a client cannot take (no capability, no session, no event stream) is a tool error, as the scenarios ask. */
async function elicitOrFail(ctx: ToolContext, params: ElicitParams): Promise<ElicitResult> {
  const { elicitation: result } = await ctx.ask({ elicitation: { method: 'elicitation/create', params } });
  if (!result)
    throw new DomainError(
      'unavailable',
      'This client cannot be asked: it declared no elicitation capability, has no session, or does not accept an event stream.',
    );
  return result;
}

@McpTool(fixture('test_tool_with_logging', 'Logging', 'Conformance fixture: sends three info log messages about 50 ms apart.', NO_ARGUMENTS))
@Injectable()
export class LoggingFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    ctx.log('info', 'Tool execution started');
    await sleep(50);
    ctx.log('info', 'Tool processing data');
    await sleep(50);
    ctx.log('info', 'Tool execution completed');
    return text('Tool with logging executed successfully');
  };
}

const SAMPLING_INPUT = {
  type: 'object',
  properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
  required: ['prompt'],
} as const;

@McpTool(fixture('test_sampling', 'Sampling', 'Conformance fixture: asks the client to sample an LLM with the prompt.', SAMPLING_INPUT))
@Injectable()
export class SamplingFixture {
  run = async ({ prompt }: ToolArgs<typeof SAMPLING_INPUT>, ctx: ToolContext) => {
    const { sampling: result } = await ctx.ask({
      sampling: { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 } },
    });
    if (!result)
      throw new DomainError(
        'unavailable',
        'This client cannot be asked: it declared no sampling capability, has no session, or does not accept an event stream.',
      );
    const content = result.content as { type?: string; text?: string } | undefined;
    return text(`LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content ?? null)}`);
  };
}

const ELICITATION_INPUT = {
  type: 'object',
  properties: { message: { type: 'string', description: 'The message to show the user' } },
  required: ['message'],
} as const;

@McpTool(fixture('test_elicitation', 'Elicitation', 'Conformance fixture: asks the user for a username and an email.', ELICITATION_INPUT))
@Injectable()
export class ElicitationFixture {
  run = async ({ message }: ToolArgs<typeof ELICITATION_INPUT>, ctx: ToolContext) => {
    const result = await elicitOrFail(ctx, {
      message,
      requestedSchema: {
        type: 'object',
        properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
        required: ['username', 'email'],
      },
    });
    return text(`User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
  };
}

@McpTool(
  fixture(
    'test_elicitation_sep1034_defaults',
    'Elicitation defaults',
    'Conformance fixture: a form with a default for every primitive type (SEP-1034).',
    NO_ARGUMENTS,
  ),
)
@Injectable()
export class ElicitationDefaultsFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    const result = await elicitOrFail(ctx, {
      message: 'Please review and update the form fields with defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      },
    });
    return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
  };
}

@McpTool(fixture('test_elicitation_sep1330_enums', 'Elicitation enums', 'Conformance fixture: a form with the five enum shapes of SEP-1330.', NO_ARGUMENTS))
@Injectable()
export class ElicitationEnumsFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    const result = await elicitOrFail(ctx, {
      message: 'Please select options from the enum fields',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            description: 'Select one option with titles',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            description: 'Select one option (legacy)',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            description: 'Select multiple options',
            minItems: 1,
            maxItems: 3,
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Select multiple options with titles',
            minItems: 1,
            maxItems: 3,
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
        required: [],
      },
    });
    return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
  };
}

export const CLIENT_REQUEST_FIXTURES = [LoggingFixture, SamplingFixture, ElicitationFixture, ElicitationDefaultsFixture, ElicitationEnumsFixture];
