// The frame of a flow that runs in its own Node (24: the library needs Node 22 or later): it reads
// where to connect from the environment, walks the seed flow with the client `connect` gives, and
// prints one JSON line, `{"steps": [...]}` or `{"error": "...", "step": "..."}`, exiting 0 or 1.
import { runSeedFlow } from '../seed-flow.ts';

/** Runs the flow with the client `connect(url, token)` answers (a SeedClient with `close()`). */
export async function main(connect) {
  const { MCP_URL, MCP_TOKEN, PROJECT_ID } = process.env;
  let client;
  try {
    client = await connect(MCP_URL, MCP_TOKEN);
    const steps = await runSeedFlow(client, { projectId: PROJECT_ID });
    console.log(JSON.stringify({ steps, ...(client.revision ? { revision: client.revision() } : {}) }));
    process.exitCode = 0;
  } catch (err) {
    console.log(JSON.stringify({ error: err instanceof Error ? err.message : String(err), step: err?.step ?? 'connect' }));
    process.exitCode = 1;
  } finally {
    await client?.close().catch(() => undefined);
  }
}
