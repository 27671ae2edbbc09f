// Top functions by self time of a V8 .cpuprofile (node --cpu-prof).
//   node bench/profile-summary.mjs <file.cpuprofile> [count]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export function summarizeProfile(file, count = 20) {
  const { nodes, samples, timeDeltas } = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  samples.forEach((id, i) => {
    const dt = timeDeltas[i] ?? 0;
    total += dt;
    self.set(id, (self.get(id) ?? 0) + dt);
  });
  const grouped = new Map();
  for (const [id, time] of self) {
    const { callFrame: f } = byId.get(id);
    const where = f.url ? `${shorten(f.url)}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'}|${where}`;
    grouped.set(key, (grouped.get(key) ?? 0) + time);
  }
  return [...grouped.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, time]) => {
      const [name, where] = key.split('|');
      return { name, where, selfPct: (100 * time) / total };
    });
}

function shorten(url) {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith('/') ? relative(process.cwd(), path) : path;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const f of summarizeProfile(process.argv[2], Number(process.argv[3] ?? 30))) {
    console.log(`${f.selfPct.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
  }
}
