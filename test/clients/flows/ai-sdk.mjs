// @ai-sdk/mcp: createMCPClient with the http transport as its README writes it, the tools of
// `client.tools()` executed directly (no model). Runs under Node 24: the package needs Node 22 or later.
import { createMCPClient } from '@ai-sdk/mcp';
import { toolValue } from '../seed-flow.ts';
import { main } from './main.mjs';

await main(async (url, token) => {
  const client = await createMCPClient({ transport: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } });
  let tools;
  let calls = 0;
  return {
    listTools: async () => Object.keys((tools = await client.tools())),
    callTool: async (name, args) => toolValue(await tools[name].execute(args, { toolCallId: `call-${++calls}`, messages: [] })),
    readResource: async (uri) => (await client.readResource({ uri })).contents,
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })).messages,
    close: () => client.close(),
  };
});
