import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toolValue, type SeedClient } from '../seed-flow.js';

/**
 * @modelcontextprotocol/client (v2), as its guide connects: a Client over the Streamable HTTP
 * transport, a bearer header; `auto` opts into version negotiation (the 2026-07-28 revision when the
 * server offers it), the default keeps the `initialize` handshake.
 */
export async function connectClientV2(
  url: string,
  token: string,
  negotiation: 'default' | 'auto',
): Promise<SeedClient & { close(): Promise<void>; revision(): string | undefined }> {
  const client = new Client(
    { name: `seed-client-v2-${negotiation}`, version: '2.0.0' },
    negotiation === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args) => toolValue(await client.callTool({ name, arguments: args })),
    readResource: async (uri) => (await client.readResource({ uri })).contents as { uri: string; mimeType?: string; text?: string }[],
    getPrompt: async (name, args) => (await client.getPrompt({ name, arguments: args })).messages,
    close: () => client.close(),
    revision: () => client.getNegotiatedProtocolVersion(),
  };
}
