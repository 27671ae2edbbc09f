import { Module } from '@nestjs/common';
import { TaskMethods } from './task-methods.js';
import { TasksRepository } from './tasks.repository.js';
import { TasksService } from './tasks.service.js';

/**
 * The MCP tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28 era): durable tasks of
 * detached tool calls, and the methods that serve them (TaskMethods, found by the transport at boot).
 */
@Module({
  providers: [TasksService, TasksRepository, TaskMethods],
  exports: [TasksService],
})
export class TasksModule {}
