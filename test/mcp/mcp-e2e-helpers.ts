import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ArticlesService, type NewArticle } from '../../src/articles/articles.service.js';
import type { Role, Scope } from '../support/fixtures.js';
import { toolJson } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/** Tools by the scope and lowest role they need (docs/protocol.md#the-catalogue). */
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

/**
 * What the MCP Inspector's `--strict` (its CLI's tools/list schema portability lint) would say of a
 * tool's schema: a `type` array (use `anyOf`), a schema node that constrains nothing, a `$ref` to
 * another document. One line per finding, with its path.
 */
export function portabilityFindings(schema: unknown, path = ''): string[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const node = schema as Record<string, unknown>;
  const findings: string[] = [];
  if (Array.isArray(node.type)) findings.push(`${path}: type is an array (${JSON.stringify(node.type)})`);
  if (typeof node.$ref === 'string' && !node.$ref.startsWith('#')) findings.push(`${path}: $ref outside the document`);
  if (!Object.keys(node).some((key) => CONSTRAINING.has(key))) findings.push(`${path}: constrains nothing`);
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']) {
    for (const [name, sub] of Object.entries((node[key] as Record<string, unknown> | undefined) ?? {}))
      findings.push(...portabilityFindings(sub, `${path}.${key}.${name}`));
  }
  for (const key of ['anyOf', 'allOf', 'oneOf', 'prefixItems']) {
    ((node[key] as unknown[] | undefined) ?? []).forEach((sub, i) => findings.push(...portabilityFindings(sub, `${path}.${key}[${i}]`)));
  }
  for (const key of ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else']) {
    if (node[key] !== undefined && typeof node[key] === 'object') findings.push(...portabilityFindings(node[key], `${path}.${key}`));
  }
  return findings;
}

const CONSTRAINING = new Set(
  (
    'type enum const multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength minLength pattern format maxItems minItems uniqueItems ' +
    'maxProperties minProperties required dependentRequired allOf anyOf oneOf not items prefixItems contains properties patternProperties additionalProperties propertyNames $ref'
  ).split(' '),
);

/** An Ajv instance with formats, for checking results against a tool's published outputSchema. */
export function outputValidator(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}
