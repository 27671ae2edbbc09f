import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

/** Every TypeScript source of src/, concatenated. */
function sources(dir = join(ROOT, 'src')): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? readFileSync(join(dir, e.name), 'utf8') : ''))
    .join('\n');
}

/** The span names of docs/operations.md#spans: the backticked names that open each row's first cell (examples after "e.g." aside). */
function documentedNames(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  const table = doc.split('### Spans')[1].split('\n### ')[0];
  const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| span name') && !line.startsWith('| ---'));
  return rows.flatMap((row) => {
    const cell = row.split(' | ')[0].slice(2);
    const named = cell.split(/, e\.g\.|;/)[0];
    return [...named.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  });
}

/** The code that names a documented span: a string literal, or a template whose `{placeholder}`s are `${...}`. */
function inCode(name: string): RegExp {
  const escaped = name.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return name.includes('{') ? new RegExp('`' + escaped.replace(/\{[^}]+\}/g, '\\$\\{[^}]+\\}') + '`') : new RegExp(`'${escaped}'`);
}

describe('docs/operations.md lists the spans the code makes', () => {
  const code = sources();
  const names = documentedNames();

  it('reads the span table (one row per kind of span)', () => {
    expect(names).toEqual(['{mcp.method.name} {target}', 'EVALSHA rate_limit.sliding_window', 'EVALSHA rate_limit.release_slot', 'job {tool}', 'POST']);
  });

  it.each(names)('"%s" is a span name in src/', (name) => {
    expect(code).toMatch(inCode(name));
  });
});
