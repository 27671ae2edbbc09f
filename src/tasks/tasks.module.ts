import { Module } from '@nestjs/common';
import { TasksRepository } from './tasks.repository.js';
import { TasksService } from './tasks.service.js';

/**
 * The MCP tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28 era): durable tasks of
 * detached tool calls. The protocol (McpModule) serves tasks/get, /update and /cancel over it.
 */
@Module({
  providers: [TasksService, TasksRepository],
  exports: [TasksService],
})
export class TasksModule {}
