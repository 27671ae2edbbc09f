import { createTenant } from '../support/fixtures.js';
import { connectClient } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ConformanceFixturesModule } from './conformance-fixtures.module.js';

// The suite's prompt scenarios (prompts-list, prompts-get-*, completion-complete), as its descriptions give them.
const PROMPT_FIXTURES = [
  'test_simple_prompt',
  'test_prompt_with_arguments',
  'test_prompt_with_embedded_resource',
  'test_prompt_with_image',
  'test_input_required_result_prompt',
];

describe('conformance prompt fixtures', () => {
  it('are not in the product: the SDK client lists no test_ prompt', async () => {
    const t = await startTestApp();
    try {
      const client = await connectClient(t, (await createTenant(t)).key);
      expect((await client.listPrompts()).prompts.filter((p) => p.name.startsWith('test_'))).toEqual([]);
      await client.close();
    } finally {
      await t.close();
    }
  });

  describe('with the fixture module', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({}, [ConformanceFixturesModule]);
    });
    afterAll(async () => {
      await t.close();
    });

    it('lists the fixtures to any credential: a read-only key sees them and no product prompt', async () => {
      const reader = await createTenant(t, { scopes: ['read'] });
      const client = await connectClient(t, reader.key);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(PROMPT_FIXTURES);
      for (const p of prompts) expect(p.description).toEqual(expect.any(String));
      expect(prompts.find((p) => p.name === 'test_prompt_with_arguments')!.arguments).toEqual([
        { name: 'arg1', description: 'First test argument', required: true },
        { name: 'arg2', description: 'Second test argument', required: true },
      ]);
      await client.close();
    });

    it("answers each scenario's messages, and completes arg1", async () => {
      const client = await connectClient(t, (await createTenant(t)).key);
      await expect(client.getPrompt({ name: 'test_simple_prompt' })).resolves.toEqual({
        messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
      });
      await expect(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'hello', arg2: 'world' } })).resolves.toEqual({
        messages: [{ role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='hello', arg2='world'" } }],
      });
      await expect(client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example-resource' } })).resolves.toEqual({
        messages: [
          {
            role: 'user',
            content: { type: 'resource', resource: { uri: 'test://example-resource', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } },
          },
          { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
        ],
      });
      const image = await client.getPrompt({ name: 'test_prompt_with_image' });
      expect(image.messages.map((m) => m.content.type)).toEqual(['image', 'text']);
      const png = image.messages[0].content as { data: string; mimeType: string };
      expect(png.mimeType).toBe('image/png');
      expect(Buffer.from(png.data, 'base64').subarray(1, 4).toString('ascii')).toBe('PNG');
      await expect(
        client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } }),
      ).resolves.toEqual({
        completion: { values: ['paris', 'park', 'party'], total: 3, hasMore: false },
      });
      await expect(
        client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg2', value: '' } }),
      ).resolves.toEqual({
        completion: { values: [], total: 0, hasMore: false },
      });
      await expect(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'hello' } })).rejects.toMatchObject({ code: -32602 });
      await client.close();
    });
  });
});
