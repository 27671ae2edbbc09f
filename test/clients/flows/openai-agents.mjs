// @openai/agents: MCPServerStreamableHttp as its README connects it (a bearer header in requestInit),
// the tools called directly on the server object, no model. Runs under Node 24: the `openai` package
// it depends on needs Node 22 or later.
import { MCPServerStreamableHttp } from '@openai/agents';
import { toolValue } from '../seed-flow.ts';
import { main } from './main.mjs';

await main(async (url, token) => {
  const server = new MCPServerStreamableHttp({ url, name: 'reblog', requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await server.connect();
  return {
    listTools: async () => (await server.listTools()).map((tool) => tool.name),
    callTool: async (name, args) => toolValue(await server.callToolResult(name, args)),
    readResource: async (uri) => (await server.readResource(uri)).contents,
    close: () => server.close(),
  };
});
