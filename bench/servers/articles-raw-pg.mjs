// The list_articles baseline (bench/README.md#targets, "list_articles at 100k articles"): a bare node:http server with
// a pg pool that reads the request, parses its JSON, runs the page-1 query WITHOUT a total and answers
// the same result shape as our tool (pretty JSON text block + structuredContent).
// With BENCH_WITH_TOTAL=true it runs our page-1 statement instead (the SQL of ArticleListingService: the
// total and generation from article_counts in the same prepared statement): the cost of our query alone,
// without the MCP pipeline.
//   DATABASE_URL=... BENCH_ACCOUNT_ID=... BENCH_PROJECT_ID=... [BENCH_WITH_TOTAL=true] node bench/servers/articles-raw-pg.mjs
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const scope = [process.env.BENCH_ACCOUNT_ID, process.env.BENCH_PROJECT_ID];
const WITH_TOTAL = process.env.BENCH_WITH_TOTAL === 'true';
const PAGE_1 = `SELECT id, handle, title, excerpt, status, tags, published_at, updated_at, version FROM articles
                 WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL
                 ORDER BY updated_at DESC, id DESC LIMIT $3`;
const OURS = {
  name: 'ours_page_1',
  text: `SELECT (SELECT n FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = $3)::int AS total,
                (SELECT generation FROM article_counts WHERE account_id = $1 AND project_id = $2 AND status = '*')::text AS generation,
                a.id, a.handle, a.title, a.excerpt, a.status, a.tags, a.published_at, a.updated_at, a.version
           FROM articles a WHERE a.account_id = $1 AND project_id = $2 AND deleted_at IS NULL
          ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5`,
};

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      return;
    }
    try {
      const pageSize = message.params?.arguments?.page_size ?? 20;
      let value;
      if (WITH_TOTAL) {
        const { rows } = await pool.query({ ...OURS, values: [...scope, '*', pageSize, 0] });
        const total = rows.length ? rows[0].total : 0;
        value = {
          items: rows.map((row) => (delete row.total, delete row.generation, row)),
          pagination: { total, page: 1, page_size: pageSize, pages: Math.ceil(total / pageSize) },
        };
      } else {
        const { rows } = await pool.query(PAGE_1, [...scope, pageSize]);
        value = { items: rows };
      }
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: message.id,
        result: { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => {
  server.close(() => pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
});
