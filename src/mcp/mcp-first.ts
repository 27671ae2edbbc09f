import { Injectable, type NestMiddleware, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NextFunction, Response } from 'express';
import { auditContextMiddleware } from '../audit/audit-context.js';
import { requestIdMiddleware } from '../common/request-id.js';
import { LifecycleService } from '../health/lifecycle.service.js';
import { McpBodyMiddleware } from './mcp-body.middleware.js';
import type { McpRequest } from './mcp-request.js';

type Handler = (req: McpRequest, res: Response, next: NextFunction) => unknown;

/** What this needs of an Express 5 app and its router's layers. */
interface Layer {
  route?: { path: string; methods: Record<string, boolean | undefined>; stack: { handle: Handler }[] };
}
interface ExpressApp {
  router: { stack: Layer[] };
  use(handler: (req: McpRequest, res: Response, next: NextFunction) => void): unknown;
}

const MCP = '/mcp';

/**
 * /mcp's one middleware: first what the app-wide middleware (src/app.factory.ts) does for every other
 * path, which /mcp is served before — the request's id, the count of requests in flight (and the 503
 * while draining), the audit context: the same functions, so the two cannot drift apart — then the body
 * ({@link McpBodyMiddleware}). Run by {@link McpRoutesFirst} before the controller's handler.
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

/**
 * Serves /mcp from the first layer of Express's stack, once Nest has registered every route (module
 * init comes after that, as for OAuthFallback). /mcp takes nearly every request an instance serves:
 * behind the app-wide middleware, Swagger's pages, the static files and every module's middleware, a
 * POST /mcp was matched against some thirty layers first, and then went through two more routes'
 * dispatch (its middleware's and its method's), each a round of closures and promises
 * (docs/architecture.md#the-mcp-pipeline). Now one layer takes the exact path `/mcp` (as the routes
 * matched it: case-sensitive, no trailing slash, any query), runs {@link McpEntryMiddleware}, then the
 * controller's handler for the method, as Nest made it (guards, filter, exception handling): POST, GET
 * (HEAD too, as Express serves it), DELETE, and the `@All()` handler for any other. The controller's own
 * route layers are taken out of the stack: this is the one way in.
 */
@Injectable()
export class McpRoutesFirst implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly entry: McpEntryMiddleware,
  ) {}

  onModuleInit(): void {
    const app = this.adapterHost.httpAdapter.getInstance<ExpressApp>();
    const stack = app.router.stack;
    const routes = stack.filter((layer) => layer.route?.path === MCP).map((layer) => layer.route!);
    // The handler of a method is the first route's that takes it, by Express's rule (HEAD goes to GET's
    // route unless one declares HEAD), found once per method.
    const handlers = new Map<string, Handler | undefined>();
    const takes = (methods: Record<string, boolean | undefined>, method: string) =>
      methods._all || methods[method] || (method === 'head' && !methods.head && methods.get);
    const handlerOf = (method: string) => {
      if (!handlers.has(method)) handlers.set(method, routes.find((route) => takes(route.methods, method))?.stack[0].handle);
      return handlers.get(method);
    };
    app.use((req: McpRequest, res: Response, next: NextFunction) => {
      const handler = req.path === MCP ? handlerOf(req.method.toLowerCase()) : undefined;
      if (!handler) return next();
      this.entry.use(req, res, (err?: unknown) => (err ? next(err) : void handler(req, res, next)));
    });
    const serve = stack.pop()!;
    stack.splice(0, stack.length, serve, ...stack.filter((layer) => layer.route?.path !== MCP));
  }
}
