import { Injectable } from '@nestjs/common';
import { RpcError } from '../../src/protocol/json-rpc.js';
import { McpTool, type ToolContext, type ToolDefinition } from '../../src/protocol/mcp-tool.decorator.js';
import { text } from './content-reply.js';

/**
 * The diagnostic tools of the 2026-07-28 `server-stateless` scenario (README.md#conformance):
 * `test_missing_capability` (-32021 unless the request declared sampling) and `test_logging_tool`
 * (log messages only when the request's `_meta` asks for them). Registered only by the conformance
 * entry point, never by the product's build.
 */

const NO_ARGUMENTS = { type: 'object', properties: {} } as const;

function fixture(name: string, title: string, description: string): ToolDefinition<typeof NO_ARGUMENTS> {
  return { name, title, description, input: NO_ARGUMENTS, scope: 'read', role: 'viewer', projectScoped: false, annotations: { readOnlyHint: true } };
}

@McpTool(
  fixture('test_missing_capability', 'Missing capability', 'Conformance fixture: needs the sampling capability declared in this request (-32021 otherwise).'),
)
@Injectable()
export class MissingCapabilityFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    if (ctx.client.capabilities.sampling === undefined) throw RpcError.missingCapability({ sampling: {} });
    return text('Success');
  };
}

@McpTool(
  fixture('test_logging_tool', 'Logging tool', 'Conformance fixture: logs one info message (sent only at the log level the request asks for), then answers.'),
)
@Injectable()
export class LoggingToolFixture {
  run = async (_args: unknown, ctx: ToolContext) => {
    ctx.log('info', 'Logging tool ran');
    return text('Logging tool completed');
  };
}

export const PROTOCOL_2026_FIXTURES = [MissingCapabilityFixture, LoggingToolFixture];
