import { Injectable, Module } from '@nestjs/common';
import { DomainError } from '../../src/common/domain-error.js';
import { McpTool, type McpToolHandler, type ToolContext } from '../../src/protocol/mcp-tool.decorator.js';
import { startTestApp, type TestApp } from './test-app.js';

// Fixture tools, for what no product tool declares yet (number and boolean arguments, a rich body, an owner-only tool).
// They change nothing, and say so (readOnlyHint): from the name alone the catalogue would hint a writer.

@McpTool({
  name: 'test_e2e_scalars',
  title: 'E2E: scalar arguments',
  description: 'Echoes its arguments; declares one argument of each scalar type.',
  input: {
    type: 'object',
    properties: { s: { type: 'string' }, n: { type: 'number' }, i: { type: 'integer' }, b: { type: 'boolean' } },
  },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  annotations: { readOnlyHint: true },
})
@Injectable()
export class ScalarsFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>) {
    return { received: args };
  }
}

@McpTool({
  name: 'test_e2e_rich_body',
  title: 'E2E: rich body',
  description: 'Echoes its arguments; accepts undeclared object arguments.',
  input: { type: 'object', properties: { title: { type: 'string' } }, additionalProperties: true },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  annotations: { readOnlyHint: true },
  richBody: true,
})
@Injectable()
export class RichBodyFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>) {
    return { received: args };
  }
}

@McpTool({
  name: 'test_e2e_owner_only',
  title: 'E2E: owner only',
  description: 'Answers the project it ran on; needs the owner role.',
  input: { type: 'object', properties: { note: { type: 'string' } } },
  scope: 'read',
  role: 'owner',
  projectScoped: true,
  annotations: { readOnlyHint: true },
})
@Injectable()
export class OwnerOnlyFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>, ctx: ToolContext) {
    return { project_id: ctx.project.id, args };
  }
}

@McpTool({
  name: 'test_e2e_required',
  title: 'E2E: a required argument',
  description: 'Echoes its arguments; title is required, count is bounded.',
  input: { type: 'object', properties: { title: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 1, maximum: 10 } }, required: ['title'] },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  annotations: { readOnlyHint: true },
})
@Injectable()
export class RequiredFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>) {
    return { received: args };
  }
}

@McpTool({
  name: 'test_e2e_crash',
  title: 'E2E: crash',
  description: 'Throws an unexpected error, or a domain error when asked.',
  input: { type: 'object', properties: { domain: { type: 'boolean' } } },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  annotations: { readOnlyHint: true },
})
@Injectable()
export class CrashFixtureTool implements McpToolHandler {
  async run(args: { domain?: boolean }): Promise<object> {
    if (args.domain) throw new DomainError('forbidden', 'Refused by the fixture.');
    throw new Error('fixture crash');
  }
}

/** The e2e fixture tools, added to the real app by {@link startFixtureApp}. */
@Module({ providers: [ScalarsFixtureTool, RichBodyFixtureTool, OwnerOnlyFixtureTool, RequiredFixtureTool, CrashFixtureTool] })
export class FixtureToolsModule {}

/** The real app (createApp, the same pipeline as every suite) plus the fixture tools, on the test run's Postgres. */
export function startFixtureApp(env: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp({ LOG_LEVEL: 'error', ...env }, [FixtureToolsModule]);
}
