// The official TypeScript SDK's stateless Streamable HTTP recipe (its example
// simpleStatelessStreamableHttp): a new McpServer and transport per request, with one trivial tool.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import * as z from 'zod/v4';

const ITEMS = JSON.stringify({ items: [{ id: '019ad2f0-0000-7000-8000-000000000000', name: 'Demo blog', role: 'owner', article_count: 5 }] }, null, 2);

function getServer() {
  const server = new McpServer({ name: 'sdk-stateless-bench', version: '1.0.0' });
  server.registerTool('list_projects', { description: 'A trivial tool answering fixed JSON.', inputSchema: { verbose: z.boolean().optional() } }, async () => ({
    content: [{ type: 'text', text: ITEMS }],
  }));
  return server;
}

const app = createMcpExpressApp();
app.post('/mcp', async (req, res) => {
  const server = getServer();
  try {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
    res.on('close', () => {
      transport.close();
      server.close();
    });
  } catch {
    if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
  }
});
const server = app.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
