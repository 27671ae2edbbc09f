import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { TestApp } from './test-app.js';

/** A raw POST /mcp whose answer is read event by event as it streams. */
export interface StreamingCall {
  /** The HTTP status and headers, once they came. */
  response: Promise<IncomingMessage>;
  /** The next JSON-RPC message of the answer (an SSE event's data, or the whole JSON body); rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<any>;
  /** Every message once the answer ended. */
  done: Promise<any[]>;
  /** Drops the connection, as a client that goes away. */
  abort(): void;
}

/** POSTs `body` to /mcp (SSE accepted unless `headers` say otherwise) and reads its answer as it comes. */
export function streamingCall(t: Pick<TestApp, 'baseUrl'>, token: string, body: unknown, headers: Record<string, string> = {}): StreamingCall {
  const url = new URL(t.baseUrl);
  const payload = Buffer.from(JSON.stringify(body));
  const messages: any[] = [];
  const waiting: ((m: any) => void)[] = [];
  let seen = 0;
  let req: ClientRequest;
  const push = (m: any) => {
    messages.push(m);
    const w = waiting.shift();
    if (w) {
      seen++;
      w(m);
    }
  };
  const response = new Promise<IncomingMessage>((resolveResponse, reject) => {
    req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: '/mcp',
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${token}`,
          ...headers,
          'Content-Length': String(payload.length),
        },
      },
      (res) => resolveResponse(res),
    );
    req.on('error', reject);
    req.end(payload);
  });
  const done = response.then(
    (res) =>
      new Promise<any[]>((resolveDone) => {
        let buffer = '';
        const sse = /^text\/event-stream/.test(res.headers['content-type'] ?? '');
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          if (!sse) return;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = event
              .split('\n')
              .filter((line) => line.startsWith('data: '))
              .map((line) => line.slice(6))
              .join('\n');
            if (data) push(JSON.parse(data));
          }
        });
        const finish = () => {
          if (!sse && buffer) push(JSON.parse(buffer));
          resolveDone(messages);
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      }),
  );
  return {
    response,
    done,
    next(timeoutMs = 15_000) {
      if (seen < messages.length) return Promise.resolve(messages[seen++]);
      return new Promise((resolveNext, reject) => {
        const timer = setTimeout(() => reject(new Error(`no message within ${timeoutMs} ms; seen ${JSON.stringify(messages)}`)), timeoutMs);
        waiting.push((m) => {
          clearTimeout(timer);
          resolveNext(m);
        });
      });
    },
    abort() {
      req.destroy();
    },
  };
}
