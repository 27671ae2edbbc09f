import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { AppModule } from '../../src/app.module.js';
import { ArticlesService, type NewArticle } from '../../src/articles/articles.service.js';
import { DomainError } from '../../src/common/domain-error.js';
import { loadConfig } from '../../src/config/config.js';
import { McpTool, type McpToolHandler, type ToolContext } from '../../src/mcp/mcp-tool.decorator.js';
import type { Role, Scope } from '../support/fixtures.js';
import { toolJson } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/** Tools by the scope and lowest role the contract gives them (spec/mcp.md "Who calls"). */
export const TOOL_TABLE: Record<string, { scope: Scope; role: Role; projectScoped: boolean }> = {
  list_projects: { scope: 'read', role: 'viewer', projectScoped: false },
  list_articles: { scope: 'read', role: 'viewer', projectScoped: true },
  get_article: { scope: 'read', role: 'viewer', projectScoped: true },
  create_article: { scope: 'write', role: 'editor', projectScoped: true },
  update_article: { scope: 'write', role: 'editor', projectScoped: true },
  publish_article: { scope: 'write', role: 'editor', projectScoped: true },
  delete_article: { scope: 'delete', role: 'owner', projectScoped: true },
  configure_agent: { scope: 'write', role: 'editor', projectScoped: true },
  get_agent_config: { scope: 'read', role: 'viewer', projectScoped: true },
  write_article: { scope: 'generate', role: 'editor', projectScoped: true },
  generate_image: { scope: 'generate', role: 'editor', projectScoped: true },
  list_jobs: { scope: 'read', role: 'viewer', projectScoped: true },
  get_job: { scope: 'read', role: 'viewer', projectScoped: false },
  cancel_job: { scope: 'write', role: 'editor', projectScoped: false },
};

/** Seeds an article through the domain service, as the write tools will. */
export function seedArticle(t: TestApp, accountId: string, projectId: string, input: NewArticle) {
  return t.app.get(ArticlesService).create({ accountId, projectId }, input);
}

/** The text block of a tool result, parsed, after checking the result has exactly one text block. */
export function singleJson(result: any): any {
  expect(Array.isArray(result.content)).toBe(true);
  expect(result.content).toHaveLength(1);
  expect(result.content[0].type).toBe('text');
  return toolJson(result);
}

/** Asserts a tool-level failure: isError, one text block `{"error":{code,message}}`, no structuredContent. */
export function expectToolError(result: any, code?: string): { code: string; message: string } {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const value = singleJson(result);
  expect(Object.keys(value)).toEqual(['error']);
  expect(Object.keys(value.error).sort()).toEqual(['code', 'message']);
  expect(typeof value.error.message).toBe('string');
  if (code) expect(value.error.code).toBe(code);
  expect(result.content[0].text).toBe(JSON.stringify(value, null, 2));
  return value.error;
}

/** A tool success: one text block holding `JSON.stringify(value, null, 2)` and the same value as structuredContent. */
export function expectToolResult(result: any): any {
  expect(result.isError).toBeFalsy();
  const value = singleJson(result);
  expect(result.content[0].text).toBe(JSON.stringify(value, null, 2));
  expect(result.structuredContent).toEqual(value);
  expect(value !== null && typeof value === 'object' && !Array.isArray(value)).toBe(true);
  return value;
}

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** An Ajv instance with formats, for checking results against a tool's published outputSchema. */
export function outputValidator(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

// ---- Fixture tools, for what no product tool declares yet (number and boolean arguments, a rich body, an owner-only tool). ----

@McpTool({
  name: 'test_e2e_scalars',
  title: 'E2E: scalar arguments',
  description: 'Echoes its arguments; declares one argument of each scalar type.',
  input: {
    type: 'object',
    properties: { s: { type: 'string' }, n: { type: 'number' }, i: { type: 'integer' }, b: { type: 'boolean' } },
  },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
})
@Injectable()
export class ScalarsFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>) {
    return { received: args };
  }
}

@McpTool({
  name: 'test_e2e_rich_body',
  title: 'E2E: rich body',
  description: 'Echoes its arguments; accepts undeclared object arguments.',
  input: { type: 'object', properties: { title: { type: 'string' } }, additionalProperties: true },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  richBody: true,
})
@Injectable()
export class RichBodyFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>) {
    return { received: args };
  }
}

@McpTool({
  name: 'test_e2e_owner_only',
  title: 'E2E: owner only',
  description: 'Answers the project it ran on; needs the owner role.',
  input: { type: 'object', properties: { note: { type: 'string' } } },
  scope: 'read',
  role: 'owner',
  projectScoped: true,
})
@Injectable()
export class OwnerOnlyFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>, ctx: ToolContext) {
    return { project_id: ctx.project.id, args };
  }
}

@McpTool({
  name: 'test_e2e_required',
  title: 'E2E: a required argument',
  description: 'Echoes its arguments; title is required, count is bounded.',
  input: { type: 'object', properties: { title: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 1, maximum: 10 } }, required: ['title'] },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
})
@Injectable()
export class RequiredFixtureTool implements McpToolHandler {
  async run(args: Record<string, unknown>) {
    return { received: args };
  }
}

@McpTool({
  name: 'test_e2e_crash',
  title: 'E2E: crash',
  description: 'Throws an unexpected error, or a domain error when asked.',
  input: { type: 'object', properties: { domain: { type: 'boolean' } } },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
})
@Injectable()
export class CrashFixtureTool implements McpToolHandler {
  async run(args: { domain?: boolean }): Promise<object> {
    if (args.domain) throw new DomainError('forbidden', 'Refused by the fixture.');
    throw new Error('fixture crash');
  }
}

/**
 * The real app plus the fixture tools, on the test run's Postgres. It serves /mcp only (no JSON
 * body parser for the admin API): create tenants through a regular test app.
 */
export async function startFixtureApp(env: Record<string, string> = {}): Promise<TestApp> {
  const adminToken = 'test-admin-' + randomBytes(12).toString('hex');
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'reblog-data-')),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'error',
    PORT: '0',
    RATE_LIMIT_PER_SECOND: '100000',
    ...env,
  });
  @Module({
    imports: [AppModule.forRoot({ config, databaseUrl: config.databaseUrl!, adminToken })],
    providers: [ScalarsFixtureTool, RichBodyFixtureTool, OwnerOnlyFixtureTool, RequiredFixtureTool, CrashFixtureTool],
  })
  class FixtureRoot {}
  const app = await NestFactory.create<NestExpressApplication>(FixtureRoot, { bodyParser: false, logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  return { app, config, baseUrl, adminToken, http: request(baseUrl), close: () => app.close() };
}
