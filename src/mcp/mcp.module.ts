import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ActivityModule } from '../activity/activity.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ClientRequestsRepository } from './client-requests.repository.js';
import { ClientRequests } from './client-requests.service.js';
import { InputRequests } from './input-requests.js';
import { McpBodyMiddleware } from './mcp-body.middleware.js';
import { McpErrorFilter } from './mcp-error.filter.js';
import { McpEntryMiddleware, McpRoutesFirst } from './mcp-first.js';
import { McpMethods } from './mcp-methods.js';
import { ClientAsking, SessionOutbox, ToolCalls } from '../protocol/mcp-method.js';
import { McpResponder } from './mcp-responder.js';
import { RequestCancellation } from '../protocol/request-cancellation.js';
import { McpController } from './mcp.controller.js';
import { McpRateLimitGuard } from './rate-limit.guard.js';
import { CredentialGuard, EraGuard, McpChecks, OriginGuard, ProtocolVersionGuard, SessionGuard } from './mcp.guards.js';
import { SessionStreams } from './session-streams.js';
import { SessionsRepository } from './sessions.repository.js';
import { SessionsService } from './sessions.service.js';
import { RpcEnvelopePipe } from './rpc-envelope.pipe.js';
import { ToolCatalogueModule } from '../protocol/tool-catalogue.module.js';
import { ToolDispatcher } from './tool-dispatcher.js';

/**
 * The transport: envelope, sessions, dispatch and the method tables, built at boot from the
 * providers' `@McpMethod` marks (tools, resources, prompts, completions and tasks live in their
 * own modules, which AppModule imports). Global, so that any feature's methods can use its ports.
 */
@Global()
@Module({
  imports: [DiscoveryModule, AuthModule, ActivityModule, RateLimitModule, ToolCatalogueModule],
  controllers: [McpController],
  providers: [
    ToolDispatcher,
    McpMethods,
    InputRequests,
    SessionsService,
    SessionsRepository,
    McpResponder,
    McpErrorFilter,
    McpRoutesFirst,
    McpEntryMiddleware,
    McpBodyMiddleware,
    OriginGuard,
    CredentialGuard,
    McpRateLimitGuard,
    EraGuard,
    SessionGuard,
    ProtocolVersionGuard,
    McpChecks,
    RpcEnvelopePipe,
    RequestCancellation,
    ClientRequests,
    ClientRequestsRepository,
    SessionStreams,
    // The ports every feature's methods may use (src/protocol/mcp-method.ts), without importing the transport.
    { provide: ClientAsking, useExisting: InputRequests },
    { provide: SessionOutbox, useExisting: SessionStreams },
    { provide: ToolCalls, useExisting: ToolDispatcher },
  ],
  exports: [RequestCancellation, ClientAsking, SessionOutbox, ToolCalls],
})
export class McpModule {}
