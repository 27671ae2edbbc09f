// The baseline: a bare node:http server that reads the request, parses its JSON (as any JSON-RPC
// server must) and answers fixed bytes — the same bytes our server answers to `tools/list`.
//   BENCH_BODY_FILE=<file with the answer> node bench/servers/raw-http.mjs
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.BENCH_BODY_FILE);
const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      return;
    }
    res.writeHead(200, headers).end(body);
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
