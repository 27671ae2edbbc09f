import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config/config.js';
import { resolveAdminToken } from './admin-token.js';

describe('resolveAdminToken: DATA_DIR/admin-token', () => {
  let dataDir: string;
  const file = () => join(dataDir, 'admin-token');
  const resolve = () => resolveAdminToken(loadConfig({ DATA_DIR: dataDir }));

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'reblog-admin-token-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('generates one on first start: 0600, whole, and no temp file left beside it', () => {
    const first = resolve();
    expect(first).toMatchObject({ file: file(), generated: true });
    expect(first.token).toMatch(/^rba_[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(file(), 'utf8')).toBe(first.token + '\n');
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(readdirSync(dataDir)).toEqual(['admin-token']);
    expect(resolve()).toEqual({ token: first.token, file: file(), generated: false });
  });

  it.each([
    ['empty', ''],
    ['a newline', '\n'],
    ['spaces and tabs', '  \t \r\n'],
  ])('replaces a file holding %s with a new token: it never starts with an empty one', (_, content) => {
    writeFileSync(file(), content, { mode: 0o600 });
    const { token, generated } = resolve();
    expect(generated).toBe(true);
    expect(token.length).toBeGreaterThanOrEqual(16);
    expect(readFileSync(file(), 'utf8')).toBe(token + '\n');
  });

  it.each([
    ['a short token', 'secret\n'],
    ['only Unicode white space (not trimmed: it is no token)', '\u00a0\u2003\n'],
    ['15 characters', 'x'.repeat(15)],
  ])('refuses to start on a file holding %s, with a sentence naming the file', (_, content) => {
    writeFileSync(file(), content, { mode: 0o600 });
    expect(resolve).toThrow(ConfigError);
    expect(resolve).toThrow(`The admin token in ${file()} is shorter than 16 characters: put a longer one there, or delete the file to have one generated.`);
    expect(readFileSync(file(), 'utf8')).toBe(content); // what someone wrote is left as it is
  });

  it('reads a token written by hand, without the newline an editor adds', () => {
    writeFileSync(file(), '  my-admin-token-of-16+\n');
    expect(resolve()).toEqual({ token: 'my-admin-token-of-16+', file: file(), generated: false });
  });

  it('ADMIN_TOKEN wins over the file, which is not read', () => {
    writeFileSync(file(), '');
    expect(resolveAdminToken(loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'from-the-environment' }))).toEqual({
      token: 'from-the-environment',
      generated: false,
    });
    expect(readFileSync(file(), 'utf8')).toBe('');
  });
});
