import { Injectable, Module } from '@nestjs/common';
import { LOG_LEVELS } from '../../src/protocol/client-capabilities.js';
import { McpTool, type ToolContext } from '../../src/protocol/mcp-tool.decorator.js';

/** A test tool that logs one message at every level, least severe first, then answers. */
@McpTool({
  name: 'log_every_level',
  title: 'Log at every level',
  description: 'Test fixture: one notifications/message per log level.',
  input: { type: 'object', properties: {} },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  annotations: { readOnlyHint: true },
})
@Injectable()
export class LogEveryLevelTool {
  run = async (_args: unknown, ctx: ToolContext) => {
    for (const level of LOG_LEVELS) ctx.log(level, { said: `${level} message` });
    return { logged: LOG_LEVELS.length };
  };
}

@Module({ providers: [LogEveryLevelTool] })
export class LogLevelsFixtureModule {}
