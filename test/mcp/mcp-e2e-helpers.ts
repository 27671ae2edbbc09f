import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ArticlesService, type NewArticle } from '../../src/articles/articles.service.js';
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
