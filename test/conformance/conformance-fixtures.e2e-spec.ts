import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TOOL_NAMES } from '../../src/common/tool-names.js';
import { createTenant } from '../support/fixtures.js';
import { connectClient, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ConformanceFixturesModule } from './conformance-fixtures.module.js';

const SRC = resolve(__dirname, '..', '..', 'src');
const NO_ARGUMENT_FIXTURES = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_error_handling',
  'test_tool_with_progress',
  'test_tool_with_logging',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
  'test_missing_capability',
  'test_logging_tool',
  // MCP 2026-07-28 input_required (mrtr-fixtures.ts).
  'test_input_required_result_elicitation',
  'test_input_required_result_sampling',
  'test_input_required_result_list_roots',
  'test_input_required_result_request_state',
  'test_input_required_result_multiple_inputs',
  'test_input_required_result_multi_round',
  'test_input_required_result_tampered_state',
  'test_input_required_result_capabilities',
  'test_streaming_elicitation',
  // The tasks extension's input_required-then-task fixture (tasks-fixtures.ts).
  'test_tool_with_task',
];
/** Fixtures taking one required string argument. */
const ONE_ARGUMENT_FIXTURES: Record<string, string> = { test_sampling: 'prompt', test_elicitation: 'message' };
const FIXTURES = [...NO_ARGUMENT_FIXTURES, ...Object.keys(ONE_ARGUMENT_FIXTURES)];

describe('conformance fixtures', () => {
  it('stay out of the production build: nothing under src/ imports from test/', () => {
    const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((file) => /['"](?:\.\.\/)+test\//.test(readFileSync(join(SRC, file), 'utf8')))).toEqual([]);
  });

  describe('in the app as the product builds it', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await t.close();
    });

    it('lists exactly the product tools (TOOL_NAMES), none of the test_ tools, and refuses to call them like unknown tools', async () => {
      const tenant = await createTenant(t);
      const client = await connectClient(t, tenant.key);
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.filter((tool) => tool.name.startsWith('test_'))).toEqual([]);
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
      await client.close();
      const res = await rpc(
        t,
        tenant.key,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } },
        { 'MCP-Protocol-Version': '2025-11-25' },
      );
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Unknown tool: test_simple_text' } });
    });
  });

  describe('with the fixture module, as the conformance entry point (main.ts) adds it', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({}, [ConformanceFixturesModule]);
    });
    afterAll(async () => {
      await t.close();
    });

    it('lists every fixture with a description and an input schema', async () => {
      const tenant = await createTenant(t);
      const client = await connectClient(t, tenant.key);
      const { tools } = await client.listTools();
      const fixtures = tools.filter((tool) => tool.name.startsWith('test_'));
      expect(fixtures.map((tool) => tool.name).sort()).toEqual([...FIXTURES].sort());
      for (const tool of fixtures) {
        expect(tool.description).toEqual(expect.any(String));
        const argument = ONE_ARGUMENT_FIXTURES[tool.name];
        expect(tool.inputSchema).toEqual(
          argument
            ? {
                type: 'object',
                properties: { [argument]: { type: 'string', description: expect.any(String) } },
                required: [argument],
                additionalProperties: false,
              }
            : { type: 'object', properties: {}, additionalProperties: false },
        );
      }
      await client.close();
    });

    it('answers the content each scenario of the suite expects', async () => {
      const tenant = await createTenant(t);
      const client = await connectClient(t, tenant.key);
      await expect(client.callTool({ name: 'test_simple_text' })).resolves.toEqual({
        content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
      });

      const image = await client.callTool({ name: 'test_image_content', arguments: {} });
      const [block] = image.content as { type: string; data: string; mimeType: string }[];
      expect(block).toMatchObject({ type: 'image', mimeType: 'image/png' });
      expect(Buffer.from(block.data, 'base64').subarray(1, 4).toString('ascii')).toBe('PNG');

      const audio = await client.callTool({ name: 'test_audio_content', arguments: {} });
      const [sound] = audio.content as { type: string; data: string; mimeType: string }[];
      expect(sound).toMatchObject({ type: 'audio', mimeType: 'audio/wav' });
      const wav = Buffer.from(sound.data, 'base64');
      expect([wav.subarray(0, 4).toString('ascii'), wav.subarray(8, 12).toString('ascii'), wav.readUInt32LE(4)]).toEqual(['RIFF', 'WAVE', wav.length - 8]);

      await expect(client.callTool({ name: 'test_embedded_resource', arguments: {} })).resolves.toEqual({
        content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
      });
      const mixed = await client.callTool({ name: 'test_multiple_content_types', arguments: {} });
      expect((mixed.content as { type: string }[]).map((c) => c.type)).toEqual(['text', 'image', 'resource']);

      const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(JSON.parse((failed.content as { text: string }[])[0].text)).toEqual({
        error: { code: 'invalid_state', message: 'This tool intentionally returns an error for testing' },
      });
      await client.close();
    });

    it('still refuses undeclared arguments to a fixture', async () => {
      const tenant = await createTenant(t);
      const client = await connectClient(t, tenant.key);
      const result = await client.callTool({ name: 'test_simple_text', arguments: { extra: 1 } });
      expect(result.isError).toBe(true);
      expect(JSON.parse((result.content as { text: string }[])[0].text).error.code).toBe('invalid_arguments');
      await client.close();
    });
  });
});
