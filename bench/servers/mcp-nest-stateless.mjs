// @rekog/mcp-nest 2.0.5 (NestJS over the SDK v2), served as its README's quick start shows: an
// `@McpController()` with one `@Tool`, and `McpStrategy` with a Streamable HTTP transport at its defaults
// (stateless; answers as an event stream, as the SDK recipe's do) connected as a microservice on Nest's
// Express app. The tool answers the same fixed JSON as bench/servers/sdk-stateless.mjs. Plain JavaScript,
// so the decorators are applied by hand.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { McpController, McpStrategy, StreamableHttpTransport, Tool } from '@rekog/mcp-nest';
import * as z from 'zod/v4';

const ITEMS = JSON.stringify({ items: [{ id: '019ad2f0-0000-7000-8000-000000000000', name: 'Demo blog', role: 'owner', article_count: 5 }] }, null, 2);

class ProjectsController {
  listProjects() {
    return { content: [{ type: 'text', text: ITEMS }] };
  }
}
const method = Object.getOwnPropertyDescriptor(ProjectsController.prototype, 'listProjects');
Tool({ name: 'list_projects', description: 'A trivial tool answering fixed JSON.', parameters: z.object({ verbose: z.boolean().optional() }) })(
  ProjectsController.prototype,
  'listProjects',
  method,
);
McpController()(ProjectsController);

class AppModule {}
Module({ controllers: [ProjectsController] })(AppModule);

const mcp = new McpStrategy({ name: 'mcp-nest-bench', version: '1.0.0', transports: [new StreamableHttpTransport()] });
const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
mcp.setHttpAdapter(app.getHttpAdapter());
app.connectMicroservice({ strategy: mcp });
await app.startAllMicroservices();
await app.listen(0, '127.0.0.1');
console.log(`listening ${app.getHttpServer().address().port}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
