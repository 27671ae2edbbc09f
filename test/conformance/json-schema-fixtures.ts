import { Injectable } from '@nestjs/common';
import { McpTool, type McpToolHandler } from '../../src/protocol/mcp-tool.decorator.js';
import { text } from './content-reply.js';

/**
 * The fixture tool of the suite's json-schema-2020-12 scenario (SEP-1613, SEP-2106): its input schema
 * names the 2020-12 dialect and uses $defs with an $anchor, allOf/anyOf and if/then/else; tools/list
 * must publish it exactly as declared. Registered only with the conformance fixtures.
 */
export const JSON_SCHEMA_2020_12_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

@McpTool({
  name: 'json_schema_2020_12_tool',
  title: 'JSON Schema 2020-12',
  description: 'Tool with JSON Schema 2020-12 features',
  input: JSON_SCHEMA_2020_12_INPUT,
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
  annotations: { readOnlyHint: true },
})
@Injectable()
export class JsonSchema202012Fixture implements McpToolHandler {
  async run(args: unknown) {
    return text(`Received: ${JSON.stringify(args)}`);
  }
}

export const JSON_SCHEMA_FIXTURES = [JsonSchema202012Fixture];
