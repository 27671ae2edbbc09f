import { Injectable } from '@nestjs/common';
import { DomainError } from '../../src/common/domain-error.js';
import type { ElicitParams } from '../../src/protocol/input.js';
import { McpTool, type ToolContext, type ToolDefinition } from '../../src/protocol/mcp-tool.decorator.js';
import { declaresTasks, tasksCapabilityMissing } from '../../src/tasks/task.js';
import { text } from './content-reply.js';

/**
 * The fixtures of the tasks-* scenarios (MCP tasks extension, SEP-2663; not scored): a sync-only
 * `greet`, and task-supporting tools that sleep (cancellable), fail as a tool, fail as a protocol
 * error, or ask the client. Registered only by the conformance entry point and the tasks tests.
 */

type Input = ToolDefinition['input'];

function fixture<const I extends Input>(
  name: string,
  description: string,
  input: I,
  taskSupport: ToolDefinition['taskSupport'],
  asksBeforeTask?: boolean,
): ToolDefinition<I> {
  return {
    name,
    title: name,
    description,
    input,
    scope: 'read',
    role: 'viewer',
    projectScoped: false,
    annotations: { readOnlyHint: true },
    taskSupport,
    ...(asksBeforeTask ? { asksBeforeTask } : {}),
  };
}

const NO_ARGUMENTS = { type: 'object', properties: {} } as const;

/**
 * MCP's "task required" (`taskSupport: required`), which no product tool needs, so it is kept here: a
 * 2026-07-28 request that did not declare the tasks extension is refused (-32021) before the tool does
 * anything. The tool declares `optional`, so with the extension its call is a task, and this passes.
 */
function requireTask(ctx: ToolContext, tool: string): void {
  if (ctx.era === 'modern' && !declaresTasks(ctx.client.capabilities)) throw tasksCapabilityMissing(`the tool ${tool}, which only runs as a task,`);
}

function form(message: string, properties: ElicitParams['requestedSchema']['properties']): { method: 'elicitation/create'; params: ElicitParams } {
  return { method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties, required: Object.keys(properties) } } };
}

/** Waits `ms`, or rejects as soon as `signal` aborts (the task was cancelled). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

const GREET_INPUT = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } as const;

@McpTool(fixture('greet', 'Tasks fixture: sync only, answers "Hello, {name}!".', GREET_INPUT, 'forbidden'))
@Injectable()
export class GreetFixture {
  run = async ({ name }: { name: string }) => text(`Hello, ${name}!`);
}

const SLOW_INPUT = {
  type: 'object',
  properties: { seconds: { type: 'number', minimum: 0, maximum: 600 }, label: { type: 'string' } },
  required: ['seconds'],
} as const;

/** Ticks of the slow fixture on this process, by label: a test sees the work stop when its task is cancelled. */
export const slowComputeTicks = new Map<string, number>();
/** How each labelled run of the slow fixture ended on this process: `stopped` when its signal aborted it. */
export const slowComputeEnded = new Map<string, 'finished' | 'stopped'>();

@McpTool(fixture('slow_compute', 'Tasks fixture: sleeps `seconds` (stops when cancelled), then answers.', SLOW_INPUT, 'optional'))
@Injectable()
export class SlowComputeFixture {
  run = async ({ seconds, label }: { seconds: number; label?: string }, ctx: ToolContext) => {
    const deadline = Date.now() + seconds * 1000;
    try {
      while (Date.now() < deadline) {
        await sleep(Math.min(100, deadline - Date.now()), ctx.signal);
        if (label) slowComputeTicks.set(label, (slowComputeTicks.get(label) ?? 0) + 1);
      }
    } finally {
      if (label) slowComputeEnded.set(label, ctx.signal.aborted ? 'stopped' : 'finished');
    }
    return text(`Computed for ${seconds}s${label ? ` (${label})` : ''}.`);
  };
}

@McpTool(fixture('failing_job', 'Tasks fixture (task required): fails as a tool (isError) after about a second.', NO_ARGUMENTS, 'optional'))
@Injectable()
export class FailingJobFixture {
  run = async (_args: unknown, ctx: ToolContext): Promise<object> => {
    requireTask(ctx, 'failing_job');
    await sleep(1000, ctx.signal);
    throw new DomainError('unavailable', 'The job failed on purpose (conformance fixture).');
  };
}

@McpTool(fixture('protocol_error_job', 'Tasks fixture: fails with an internal (protocol) error.', NO_ARGUMENTS, 'optional'))
@Injectable()
export class ProtocolErrorJobFixture {
  run = async (): Promise<object> => {
    throw new Error('protocol_error_job crashed on purpose');
  };
}

const FILE_INPUT = { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] } as const;

/** How many times confirm_delete got its answer, by filename (tests count the runs an answer resumes). */
export const confirmDeleteAnswered = new Map<string, number>();

@McpTool(fixture('confirm_delete', 'Tasks fixture: asks the user to confirm (elicitation), then answers.', FILE_INPUT, 'optional'))
@Injectable()
export class ConfirmDeleteFixture {
  run = async ({ filename }: { filename: string }, ctx: ToolContext) => {
    const { confirm } = await ctx.ask({ confirm: form(`Delete ${filename}?`, { confirm: { type: 'boolean' } }) });
    confirmDeleteAnswered.set(filename, (confirmDeleteAnswered.get(filename) ?? 0) + 1);
    const yes = confirm?.action === 'accept' && confirm.content?.confirm === true;
    return text(yes ? `Deleted ${filename}.` : `Kept ${filename}.`);
  };
}

@McpTool(fixture('multi_input', 'Tasks fixture: asks two questions at once (elicitation), then answers.', NO_ARGUMENTS, 'optional'))
@Injectable()
export class MultiInputFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    const { name, confirm } = await ctx.ask({
      name: form('Your name?', { name: { type: 'string' } }),
      confirm: form('Go ahead?', { confirm: { type: 'boolean' } }),
    });
    return text(
      `Name ${name?.action === 'accept' ? String(name.content?.name) : '(none)'}, confirmed ${String(confirm?.action === 'accept' && confirm.content?.confirm === true)}.`,
    );
  };
}

@McpTool(
  fixture(
    'test_tool_with_task',
    'Tasks fixture (task required): asks for a name in the request (input_required), then runs as a task that greets it.',
    NO_ARGUMENTS,
    'optional',
    true,
  ),
)
@Injectable()
export class ToolWithTaskFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    requireTask(ctx, 'test_tool_with_task');
    const { user_name } = await ctx.ask({ user_name: form('What is your name?', { name: { type: 'string' } }) });
    await ctx.detach();
    await sleep(200, ctx.signal);
    return text(`Hello, ${user_name?.action === 'accept' ? String(user_name.content?.name) : '(no name)'}, from a task!`);
  };
}

export const TASKS_FIXTURES = [
  GreetFixture,
  SlowComputeFixture,
  FailingJobFixture,
  ProtocolErrorJobFixture,
  ConfirmDeleteFixture,
  MultiInputFixture,
  ToolWithTaskFixture,
];
