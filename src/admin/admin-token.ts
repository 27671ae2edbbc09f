import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../config/config.js';

/** Injection token of the admin bearer token in force. */
export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');

/**
 * The admin token: ADMIN_TOKEN when set; otherwise (never in production, where config refuses to
 * start without it) one generated on first start and kept in DATA_DIR.
 */
export function resolveAdminToken(config: AppConfig): { token: string; file?: string; generated: boolean } {
  if (config.adminToken) return { token: config.adminToken, generated: false };
  const file = join(config.dataDir, 'admin-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), file, generated: false };
  mkdirSync(config.dataDir, { recursive: true });
  const token = 'rba_' + randomBytes(32).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600 });
  return { token, file, generated: true };
}
