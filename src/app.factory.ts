import { ValidationPipe, type NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express from 'express';
import { Logger } from 'nestjs-pino';
import { createServer } from 'node:http';
import { AppModule, type AppOptions } from './app.module.js';
import { auditContextMiddleware } from './audit/audit-context.js';
import { expressServerOptions } from './common/express-server.js';
import { HttpErrorFilter } from './common/http-error.filter.js';
import { requestIdMiddleware } from './common/request-id.js';
import { LifecycleService } from './health/lifecycle.service.js';

export const BODY_LIMIT = 1024 * 1024;

/** Builds the Nest application (without listening): the same for `npm start` and the e2e tests. */
export async function createApp(options: AppOptions): Promise<NestExpressApplication> {
  // Paths match exactly: `/MCP` or `/mcp/` are unknown routes (404), not `/mcp` reached past its body
  // middleware. Express reads these two settings once, when it makes its router: set them first.
  const server = express();
  server.set('case sensitive routing', true);
  server.set('strict routing', true);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(options), new ExpressMadeAdapter(server), {
    bodyParser: false,
    bufferLogs: true,
    // A failure while booting (the database unreachable) is thrown to the caller, which reports it and
    // stops what it started, rather than Nest ending the process itself (and, under Jest, the whole run).
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  app.set('trust proxy', options.config.trustProxy);
  app.disable('x-powered-by');
  // First of all: the request's id (kept from the gateway or made), echoed and on every log line of it.
  app.use(requestIdMiddleware);
  // Then: counts requests in flight and refuses new ones once a shutdown has begun.
  app.use(app.get(LifecycleService).middleware);

  // The REST side parses JSON here, and the pages' forms and the OAuth token endpoint are form-encoded.
  // /mcp never comes here: the first layer serves it (McpRoutesFirst), runs the three middleware around this
  // itself, and reads its own body (it must answer JSON-RPC errors for every malformed one).
  app.use(express.json({ limit: BODY_LIMIT }), express.urlencoded({ extended: false, limit: BODY_LIMIT }));
  // Who acts and from where, for the audit trail (after the body parsers: see the middleware).
  app.use(auditContextMiddleware);

  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.useGlobalFilters(new HttpErrorFilter());

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Reblog MCP admin API')
      .setDescription('Tenants, projects and credentials of Reblog MCP, and what happened with them.')
      .setVersion('v1')
      .addBearerAuth()
      .build(),
  );
  SwaggerModule.setup('admin/v1/docs', app, document, { jsonDocumentUrl: 'admin/v1/openapi.json' });
  return app;
}

/**
 * Nest's Express adapter, whose HTTP server makes each request and response with Express's prototypes
 * from the start (common/express-server.ts), so Express's own dispatch changes neither. What else the
 * adapter does with its options (HTTPS, connections closed on shutdown, the 503 while closing) it does as before.
 */
class ExpressMadeAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) return super.initHttpServer(options);
    const app = this.getInstance<express.Express>();
    this.setHttpServer(createServer(expressServerOptions(app), app));
  }
}
