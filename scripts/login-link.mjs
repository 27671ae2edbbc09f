// npm run login-link -- <email> [--return-to /path] [--expires-in seconds]: prints a single-use
// sign-in link for a person (a self-hosted server with no identity provider). Runs the build in
// dist/ (npm start and npm run build make it; built here first when there is none) on the database
// the server uses: DATABASE_URL, or the embedded one of DATA_DIR (default ./.data).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'sign-in', 'login-link.cli.js');

if (!existsSync(CLI)) {
  process.stderr.write('No build yet: running npm run build first.\n');
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}
const { main } = await import(pathToFileURL(CLI).href);
process.exitCode = await main(process.argv.slice(2));
