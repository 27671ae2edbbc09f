import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toolValue, type SeedClient } from '../seed-flow.js';

/** @modelcontextprotocol/sdk (v1), as its README connects: a Client over the Streamable HTTP transport, a bearer header. */
export async function connectSdkV1(url: string, token: string): Promise<SeedClient & { close(): Promise<void> }> {
  const client = new Client({ name: 'seed-sdk-v1', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return { ...sdkV1Calls(client), close: () => client.close() };
}

/** The seed flow's calls on a connected v1 Client, whatever its transport. */
export function sdkV1Calls(client: Client): SeedClient {
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args) => toolValue(await client.callTool({ name, arguments: args })),
    readResource: async (uri) => (await client.readResource({ uri })).contents as { uri: string; mimeType?: string; text?: string }[],
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })).messages,
  };
}
