import { Injectable, type NestMiddleware, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express, NextFunction, Request, Response } from 'express';
import { auditContextMiddleware } from '../audit/audit-context.js';
import { requestIdMiddleware } from '../common/request-id.js';
import { LifecycleService } from '../health/lifecycle.service.js';

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
 * (docs/architecture.md#the-mcp-pipeline). Their own order is kept: {@link McpEntryMiddleware}, the body
 * middleware, then the controller's methods.
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
 * First of /mcp's middleware: what the app-wide middleware (src/app.factory.ts) does for every other
 * path, which /mcp now comes before — the request's id, the count of requests in flight (and the 503
 * while draining), and the audit context. The same functions, so the two cannot drift apart.
 */
@Injectable()
export class McpEntryMiddleware implements NestMiddleware {
  constructor(private readonly lifecycle: LifecycleService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    requestIdMiddleware(req, res, () => this.lifecycle.middleware(req, res, () => auditContextMiddleware(req, res, next)));
  }
}
