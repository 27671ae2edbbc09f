import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { Duplex } from 'node:stream';
import type { TestApp } from './test-app.js';

/** Two connected in-memory streams: what one is written, the other reads. */
function streamPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  const end = (other: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk, _encoding, done) {
        other().push(chunk);
        done();
      },
      final(done) {
        other().push(null);
        done();
      },
    });
  ends.push(
    end(() => ends[1]),
    end(() => ends[0]),
  );
  return [ends[0], ends[1]];
}

/**
 * One HTTP request to the app as if its TCP peer were `peer` (a gateway on 10.0.0.0/8, say): the
 * connection is a pair of in-memory streams handed to the app's HTTP server (Node serves any Duplex
 * so injected), so no packet goes to that address. Answers the status, headers and JSON body.
 */
export function requestFromPeer(
  t: TestApp,
  peer: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: IncomingHttpHeaders; body: any }> {
  const [serverEnd, clientEnd] = streamPair();
  Object.defineProperty(serverEnd, 'remoteAddress', { value: peer });
  (t.app.getHttpServer() as Server).emit('connection', serverEnd);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        createConnection: () => clientEnd as never,
        method: opts.method ?? 'GET',
        path: opts.path,
        headers: { Host: new URL(t.baseUrl).host, Connection: 'close', ...opts.headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          clientEnd.destroy();
          serverEnd.destroy();
          resolve({ status: res.statusCode!, headers: res.headers, body: text && /json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : text });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}
