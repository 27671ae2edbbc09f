import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { declaredHotStatements } from './sql.js';

/**
 * The hot statements, as reviewable SQL: every repository's `hot` statements are kept in
 * `src/queries/<aggregate>.sql`, and this test fails when a statement changed without its snapshot.
 * After a deliberate change: `UPDATE_QUERY_SNAPSHOTS=1 npx jest src/database/hot-statements`, and review the diff.
 */
const SRC = join(__dirname, '..');
const SNAPSHOTS = join(SRC, 'queries');
const update = process.env.UPDATE_QUERY_SNAPSHOTS === '1';

function repositoryFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.repository.ts')).map((f) => join(SRC, f));
}

/** Common indentation off, trailing white space off: the statement as a reviewer reads it. */
function dedent(text: string): string {
  const lines = text
    .replace(/^\n+|\s+$/g, '')
    .split('\n')
    .map((l) => l.trimEnd());
  const indents = lines
    .slice(1)
    .filter((l) => l.trim())
    .map((l) => l.length - l.trimStart().length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return [lines[0].trimStart(), ...lines.slice(1).map((l) => l.slice(cut))].join('\n');
}

function render(statements: [string, string][]): string {
  return statements.map(([name, text]) => `-- ${name}\n${dedent(text)};\n`).join('\n');
}

describe('hot statements (src/queries/*.sql)', () => {
  const expected = new Map<string, string>();

  beforeAll(async () => {
    for (const file of repositoryFiles()) await import(file);
    const byAggregate = new Map<string, [string, string][]>();
    for (const [name, text] of [...declaredHotStatements()].sort(([a], [b]) => a.localeCompare(b))) {
      const aggregate = name.split('.')[0];
      byAggregate.set(aggregate, [...(byAggregate.get(aggregate) ?? []), [name, text]]);
    }
    for (const [aggregate, statements] of byAggregate) expected.set(`${aggregate}.sql`, render(statements));
    if (update) {
      mkdirSync(SNAPSHOTS, { recursive: true });
      for (const f of readdirSync(SNAPSHOTS)) if (f.endsWith('.sql') && !expected.has(f)) unlinkSync(join(SNAPSHOTS, f));
      for (const [file, text] of expected) writeFileSync(join(SNAPSHOTS, file), text);
    }
  });

  it('every file that declares a hot statement is a repository file, where this test finds them', () => {
    const declaring = (readdirSync(SRC, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
      .filter((f) => /\bhot:\s*true\b/.test(readFileSync(join(SRC, f), 'utf8')))
      .map((f) => join(SRC, f));
    expect(declaring.length).toBeGreaterThan(0);
    expect(declaring.filter((f) => !repositoryFiles().includes(f))).toEqual([]);
  });

  it('each snapshot matches the statements the repositories declare', () => {
    for (const [file, text] of expected) {
      const path = join(SNAPSHOTS, file);
      if (!existsSync(path)) throw new Error(`${relative(SRC, path)} is missing: run UPDATE_QUERY_SNAPSHOTS=1 npx jest src/database/hot-statements`);
      expect({ file, text: readFileSync(path, 'utf8') }).toEqual({ file, text });
    }
  });

  it('no snapshot is left of a statement that is gone', () => {
    const stale = existsSync(SNAPSHOTS) ? readdirSync(SNAPSHOTS).filter((f) => f.endsWith('.sql') && !expected.has(f)) : [];
    expect(stale).toEqual([]);
  });
});
