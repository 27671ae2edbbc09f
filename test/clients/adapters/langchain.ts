import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { toolValue, type SeedClient } from '../seed-flow.js';

/**
 * @langchain/mcp-adapters: a MultiServerMCPClient as its README configures one (a Streamable HTTP
 * server with a bearer header, standard content blocks), each tool of `getTools()` invoked with its
 * arguments, no model. The library reads resources; it has no call for prompts.
 */
export async function connectLangchain(url: string, token: string): Promise<SeedClient & { close(): Promise<void> }> {
  const client = new MultiServerMCPClient({
    useStandardContentBlocks: true,
    mcpServers: { reblog: { url, headers: { Authorization: `Bearer ${token}` }, automaticSSEFallback: false } },
  });
  const tools = await client.getTools();
  return {
    listTools: async () => tools.map((t) => t.name),
    callTool: async (name, args) => {
      const tool = tools.find((t) => t.name === name);
      if (!tool) throw new Error(`getTools() has no ${name}`);
      const content: unknown = await tool.invoke(args);
      // A lone text block comes back as a string, or (standard blocks) as the block itself.
      return typeof content === 'string' ? JSON.parse(content) : toolValue({ content: Array.isArray(content) ? content : [content] });
    },
    readResource: async (uri) => (await client.readResource('reblog', uri)).map((c) => ({ uri: c.uri, mimeType: c.mimeType, text: c.text })),
    close: () => client.close(),
  };
}
