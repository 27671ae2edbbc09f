#!/usr/bin/env node
// Every citation of the repository's own documents resolves: `docs/<name>.md`, `README.md` and
// `bench/README.md`, with or without a `#anchor`, in src/, test/, bench/, scripts/, .ci/, README.md
// and docs/ (markdown links between the documents included). An anchor is the GitHub slug of a
// heading of the cited file. Prints each broken citation with where it is and exits 1 if any;
// `--anchors` lists every anchor instead.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCANNED = ['src', 'test', 'bench', 'scripts', '.ci', 'docs', 'README.md'];
const EXTENSIONS = /\.(ts|mts|cts|js|mjs|cjs|md|json|sh)$|^run$/;

/** GitHub's heading slug (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file: one per heading outside code fences, repeats numbered -1, -2… */
function anchorsOf(file) {
  const anchors = new Set();
  const seen = new Map();
  let fence = null;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const opening = /^\s*(```|~~~)/.exec(line);
    if (opening) {
      if (fence === null) fence = opening[1];
      else if (line.trim().startsWith(fence)) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function* files(path) {
  if (!existsSync(path)) return;
  if (statSync(path).isFile()) {
    yield path;
    return;
  }
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const child = join(path, entry.name);
    if (entry.isDirectory()) yield* files(child);
    else if (EXTENSIONS.test(entry.name)) yield child;
  }
}

const anchorCache = new Map();
function anchors(target) {
  if (!anchorCache.has(target)) anchorCache.set(target, anchorsOf(join(root, target)));
  return anchorCache.get(target);
}

if (process.argv.includes('--anchors')) {
  const documents = [
    'README.md',
    'bench/README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  for (const document of documents) for (const anchor of anchors(document)) console.log(`${document}#${anchor}`);
  process.exit(0);
}

// `docs/x.md#a`, `bench/README.md#a`, `README.md#a` anywhere; in markdown also `](x.md#a)` and `](#a)`.
const CITATION = /(?<![\w/.-])((?:bench\/)?README\.md|docs\/[\w-]+\.md)(?:#([\w-]+))?/g;
const MARKDOWN_LINK = /\]\((?!https?:|mailto:)([^)\s#]*\.md)?(?:#([^)\s]+))?\)/g;

const broken = [];
let checked = 0;
for (const scanned of SCANNED) {
  for (const file of files(join(root, scanned))) {
    const name = relative(root, file);
    if (name === 'scripts/check-doc-links.mjs') continue;
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, index) => {
      const found = [];
      for (const match of line.matchAll(CITATION)) found.push([match[1], match[2]]);
      if (name.endsWith('.md')) {
        for (const match of line.matchAll(MARKDOWN_LINK)) {
          if (match[1] === undefined && match[2] === undefined) continue;
          const target = match[1] === undefined ? name : normalize(join(dirname(name), match[1]));
          if (match[1] !== undefined && !target.endsWith('.md')) continue;
          found.push([target, match[2]]);
        }
      }
      for (const [target, anchor] of found) {
        checked++;
        const where = `${name}:${index + 1}`;
        if (!existsSync(join(root, target))) broken.push(`${where}: ${target} does not exist`);
        else if (anchor !== undefined && !anchors(target).has(anchor)) broken.push(`${where}: ${target} has no heading #${anchor}`);
      }
    });
  }
}

if (broken.length > 0) {
  console.error(`${broken.length} broken citation(s) of the repository's documents:\n${broken.join('\n')}`);
  process.exit(1);
}
console.log(`${checked} citations of the repository's documents resolve.`);
