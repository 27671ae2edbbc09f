// A bare Express 5 app answering POST /mcp with fixed JSON, its HTTP server made either as Express's
// guide makes it (`http.createServer(app)`: Express sets its prototypes on each request and response) or
// as the product makes it (src/common/express-server.ts: they are made with them).
//   BENCH_MADE=true|false node bench/servers/express-bare.mjs
import express from 'express';
import { createServer } from 'node:http';
import { expressServerOptions } from '../../dist/src/common/express-server.js';

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":{}}';
const app = express();
app.disable('x-powered-by');
app.post('/mcp', (req, res) => {
  res.type('application/json').send(ANSWER);
});
const server = process.env.BENCH_MADE === 'true' ? createServer(expressServerOptions(app), app) : createServer(app);
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
