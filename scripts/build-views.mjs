// Builds the MCP Apps views (docs/protocol.md#mcp-apps-views): each entry of views/ bundled with the
// ext-apps App, marked and DOMPurify into ONE self-contained HTML file under dist/views/ (script and
// style inline; nothing fetched at run time). `npm run build` runs it; the tests' global setup too.
import { build } from 'esbuild';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const VIEWS = ['article', 'articles'];

/** Builds every view into `outDir` (dist/views by default); answers the files written. */
export async function buildViews(outDir = join(ROOT, 'dist', 'views')) {
  await mkdir(outDir, { recursive: true });
  const css = await readFile(join(ROOT, 'views', 'view.css'), 'utf8');
  const written = [];
  for (const name of VIEWS) {
    const result = await build({
      entryPoints: [join(ROOT, 'views', `${name}.ts`)],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      legalComments: 'none',
      logLevel: 'silent',
      tsconfig: join(ROOT, 'views', 'tsconfig.json'),
    });
    // `</script` inside the bundle would end the inline script early.
    const js = result.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
    const html =
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<meta name="color-scheme" content="light dark"><title>Reblog</title><style>${css}</style></head>` +
      `<body><main id="root" aria-live="polite"><p class="muted">Loading…</p></main><script>${js}</script></body></html>\n`;
    const file = join(outDir, `${name}.html`);
    // Written aside then renamed: a server reading the file never sees half of it.
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, html);
    await rename(tmp, file);
    written.push(file);
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await buildViews();
  console.log(`Built ${files.length} MCP Apps views: ${files.map((f) => f.slice(ROOT.length + 1)).join(', ')}`);
}
