import { RpcError } from '../protocol/json-rpc.js';
import type { ObjectSchema } from '../protocol/mcp-tool.decorator.js';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const SCALARS: Record<string, string> = { string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean' };

/**
 * The argument guard (docs/protocol.md#the-argument-guard), run before schema validation and before any query is built:
 * objects and arrays never reach a handler where a scalar is declared or nothing is declared.
 */
export function guardArguments(args: unknown, schema: ObjectSchema, richBody = false): Record<string, unknown> {
  if (args === undefined) return {};
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw RpcError.invalidParams('Invalid arguments: "arguments" must be an object.');
  }
  assertNoForbiddenKeys(args);
  for (const [name, value] of Object.entries(args)) {
    if (value === null || typeof value !== 'object') continue;
    // project_id belongs to project routing: a string wherever it appears.
    const declared = name === 'project_id' ? { type: 'string' } : schema.properties[name];
    if (!declared) {
      if (!richBody) throw RpcError.invalidParams(`Unexpected argument "${name}": objects are not accepted here.`);
      continue;
    }
    const scalar = SCALARS[declared.type as string];
    if (scalar) throw RpcError.invalidParams(`Invalid value for "${name}": expected ${scalar}.`);
  }
  return args as Record<string, unknown>;
}

function assertNoForbiddenKeys(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) assertNoForbiddenKeys(item);
    return;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) throw RpcError.invalidParams(`Invalid arguments: the key "${key}" is not allowed.`);
    assertNoForbiddenKeys((value as Record<string, unknown>)[key]);
  }
}
