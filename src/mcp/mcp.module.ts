import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ActivityModule } from '../activity/activity.module.js';
import { CompletionsModule } from '../completions/completions.module.js';
import { PromptsModule } from '../prompts/prompts.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ResourceMethods } from '../resources/resource-methods.js';
import { ResourcesModule } from '../resources/resources.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ClientRequestsRepository } from './client-requests.repository.js';
import { ClientRequests } from './client-requests.service.js';
import { InputRequests } from './input-requests.js';
import { McpBodyMiddleware } from './mcp-body.middleware.js';
import { McpErrorFilter } from './mcp-error.filter.js';
import { McpMethods } from './mcp-methods.js';
import { McpResponder } from './mcp-responder.js';
import { RequestCancellation } from './request-cancellation.js';
import { McpController } from './mcp.controller.js';
import { McpRateLimitGuard } from './rate-limit.guard.js';
import { CredentialGuard, EraGuard, OriginGuard, ProtocolVersionGuard, SessionGuard } from './mcp.guards.js';
import { SessionStreams } from './session-streams.js';
import { SessionsRepository } from './sessions.repository.js';
import { SessionsService } from './sessions.service.js';
import { RpcEnvelopePipe } from './rpc-envelope.pipe.js';
import { TasksModule } from '../tasks/tasks.module.js';
import { ToolCatalogueModule } from './tool-catalogue.module.js';
import { ToolDispatcher } from './tool-dispatcher.js';

/** The protocol: transport, envelope, sessions, catalogue and dispatch. Tools live in their own modules. */
@Module({
  imports: [DiscoveryModule, AuthModule, ActivityModule, RateLimitModule, ToolCatalogueModule, ResourcesModule, PromptsModule, CompletionsModule, TasksModule],
  controllers: [McpController],
  providers: [ToolDispatcher, McpMethods, InputRequests, SessionsService, SessionsRepository, McpResponder, McpErrorFilter, OriginGuard, CredentialGuard, McpRateLimitGuard, EraGuard, SessionGuard, ProtocolVersionGuard, RpcEnvelopePipe, RequestCancellation, ClientRequests, ClientRequestsRepository, SessionStreams, ResourceMethods],
  exports: [RequestCancellation],
})
export class McpModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(McpBodyMiddleware).forRoutes({ path: 'mcp', method: RequestMethod.ALL });
  }
}
