import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ConformanceFixturesModule } from '../conformance/conformance-fixtures.module.js';
import { createTenant } from '../support/fixtures.js';
import { connectClient, toolJson } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/**
 * The same ask API (ctx.ask) in the 2025 era: the MRTR fixtures' questions go out one at a time as
 * server→client requests on the call's event stream (elicitation, sampling, and roots/list), and a
 * prompt asks the same way; a client that declared nothing is not asked.
 */
describe('ctx.ask in the 2025 era (official SDK client)', () => {
  let t: TestApp;
  let key: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestApp({}, [ConformanceFixturesModule]);
    key = (await createTenant(t)).key;
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  afterAll(() => t?.close());

  async function askedClient() {
    const asked: string[] = [];
    const client = await connectClient(t, key, 'asked-client', { elicitation: {}, sampling: {}, roots: {} });
    clients.push(client);
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicit:${request.params.message}`);
      return {
        action: 'accept',
        content: request.params.message.includes('color')
          ? { color: 'green' }
          : request.params.message.includes('context')
            ? { context: 'from 2025' }
            : { name: 'Lee' },
      };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked.push('sample');
      return { role: 'assistant', content: { type: 'text', text: 'Hello there' }, model: 'm', stopReason: 'endTurn' };
    });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      asked.push('roots');
      return { roots: [{ uri: 'file:///work', name: 'Work' }] };
    });
    return { client, asked };
  }

  it('several questions go out one after the other over the stream, roots/list included', async () => {
    const { client, asked } = await askedClient();
    const result = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'Name: Lee; Greeting: Hello there; Roots: 1' }]);
    expect(asked).toEqual(['elicit:What is your name?', 'sample', 'roots']);
  });

  it('two rounds are two questions in one call', async () => {
    const { client, asked } = await askedClient();
    const result = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'Multi-round complete for Lee who likes green' }]);
    expect(asked).toHaveLength(2);
  });

  it('prompts/get asks over the stream too', async () => {
    const { client, asked } = await askedClient();
    const prompt = await client.getPrompt({ name: 'test_input_required_result_prompt' });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Prompt with context: from 2025' } }]);
    expect(asked).toEqual(['elicit:What context should the prompt use?']);
  });

  it('a client that declared nothing is not asked: the tools say so, the capability-aware one completes', async () => {
    const client = await connectClient(t, key, 'plain-client');
    clients.push(client);
    const refused = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(toolJson(refused).error.code).toBe('unavailable');
    const none = await client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} });
    expect(none.content).toEqual([{ type: 'text', text: 'No supported capabilities declared' }]);
    const prompt = await client.getPrompt({ name: 'test_input_required_result_prompt' });
    expect(prompt.messages[0].content).toEqual({ type: 'text', text: 'Prompt with context: none given' });
  });
});
