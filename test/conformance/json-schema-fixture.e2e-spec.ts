import { createTenant } from '../support/fixtures.js';
import { connectClient } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ConformanceFixturesModule } from './conformance-fixtures.module.js';
import { JSON_SCHEMA_2020_12_INPUT } from './json-schema-fixtures.js';

// The suite's json-schema-2020-12 scenario: the schema is published as declared, and enforced with the 2020-12 dialect.
describe('conformance JSON Schema 2020-12 fixture tool', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, [ConformanceFixturesModule]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('tools/list publishes its input schema exactly as declared ($schema, $defs with $anchor, allOf/anyOf, if/then/else)', async () => {
    const client = await connectClient(t, (await createTenant(t)).key);
    const { tools } = await client.listTools();
    const tool = tools.find((x) => x.name === 'json_schema_2020_12_tool');
    expect(tool).toMatchObject({ description: 'Tool with JSON Schema 2020-12 features', inputSchema: JSON_SCHEMA_2020_12_INPUT });
    expect(tool!.inputSchema).toEqual(JSON_SCHEMA_2020_12_INPUT);
    await client.close();
  });

  it('validates arguments by that schema: $ref into $defs, anyOf and if/then/else', async () => {
    const client = await connectClient(t, (await createTenant(t)).key);
    const ok = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { name: 'Ada', email: 'ada@example.com', address: { city: 'London' } } });
    expect(ok.isError).toBeFalsy();
    for (const bad of [
      { name: 'Ada' },
      { contactMethod: 'phone', email: 'ada@example.com' },
      { email: 'a@b.c', address: { city: 5 } },
      { email: 'a@b.c', nickname: 'x' },
    ]) {
      const result = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: bad });
      expect(result.isError).toBe(true);
      expect(JSON.parse((result.content as { text: string }[])[0].text).error.code).toBe('invalid_arguments');
    }
    await client.close();
  });
});
