import { Injectable, type NestMiddleware, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express, NextFunction, Response } from 'express';
import { auditContextMiddleware } from '../audit/audit-context.js';
import { requestIdMiddleware } from '../common/request-id.js';
import { LifecycleService } from '../health/lifecycle.service.js';
import { McpBodyMiddleware } from './mcp-body.middleware.js';
import type { McpRequest } from './mcp-request.js';

/** What this needs of an Express 5 router layer. */
interface Layer {
  route?: { path: string };
}

const MCP = '/mcp';

/**
 * Puts /mcp's layers at the head of Express's stack, once Nest has registered every route (module
 * init comes after that, as for OAuthFallback). /mcp takes nearly every request an instance serves,
 * and Express tries its layers in order: behind the app-wide middleware, Swagger's pages, the static
 * files and every module's middleware, a POST /mcp was matched against some thirty layers first
 * (docs/architecture.md#the-mcp-pipeline). Their own order is kept: {@link McpEntryMiddleware}, then the
 * controller's methods.
 */
@Injectable()
export class McpRoutesFirst implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const app = this.adapterHost.httpAdapter.getInstance<Express & { router: { stack: Layer[] } }>();
    const stack = app.router.stack;
    const isMcp = (layer: Layer) => layer.route?.path === MCP;
    stack.splice(0, stack.length, ...stack.filter(isMcp), ...stack.filter((layer) => !isMcp(layer)));
  }
}

/**
 * /mcp's one middleware: first what the app-wide middleware (src/app.factory.ts) does for every other
 * path, which /mcp now comes before — the request's id, the count of requests in flight (and the 503
 * while draining), the audit context: the same functions, so the two cannot drift apart — then the body
 * ({@link McpBodyMiddleware}). One layer rather than two: each costs Express and Nest a round of promises.
 */
@Injectable()
export class McpEntryMiddleware implements NestMiddleware {
  constructor(
    private readonly lifecycle: LifecycleService,
    private readonly body: McpBodyMiddleware,
  ) {}

  use(req: McpRequest, res: Response, next: NextFunction): void {
    const read = () => void this.body.use(req, res, next).catch(next);
    requestIdMiddleware(req, res, () => this.lifecycle.middleware(req, res, () => auditContextMiddleware(req, res, read)));
  }
}
