import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fake OpenAI-compatible writer on loopback. */
export interface SlowWriter {
  /** Its base URL, for WRITER_BASE_URL. */
  url: string;
  /** The env of an app whose writer it is. */
  env: Record<string, string>;
  /** Chat-completion requests it has been sent. */
  requests: number;
  close(): Promise<void>;
}

/**
 * A writer that answers a valid draft after `delayMs` and says nothing before: like a real model that
 * takes its time, the job it runs reports no progress of its own until it is done.
 */
export async function slowWriter(delayMs: number): Promise<SlowWriter> {
  const draft = { title: 'A slow draft', excerpt: 'Written without hurry.', body: '## Patience\n\nGood things take time.', tags: ['patience'] };
  const writer = { requests: 0 } as SlowWriter;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      writer.requests++;
      const timer = setTimeout(() => {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: JSON.stringify(draft) } }] }));
      }, delayMs);
      res.on('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  writer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  writer.env = { WRITER_PROVIDER: 'openai', WRITER_BASE_URL: writer.url };
  writer.close = () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return writer;
}
