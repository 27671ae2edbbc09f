import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, MIN_ADMIN_TOKEN_LENGTH, type AppConfig } from '../config/config.js';

/** Injection token of the admin bearer token in force. */
export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');

export interface ResolvedAdminToken {
  token: string;
  /** Where it is kept, when it was not given as ADMIN_TOKEN. */
  file?: string;
  /** Made by this start (first start, or the file held no token). */
  generated: boolean;
}

/**
 * The admin token: ADMIN_TOKEN when set; otherwise (never in production, where config refuses to
 * start without it) one generated on first start and kept in DATA_DIR/admin-token.
 *
 * The server never starts with an empty token (docs/admin-api.md#conventions). A file that holds nothing but
 * white space (a first start that died after creating it, a `touch`) gets a new token; a file
 * holding a token too short to be one is refused with a sentence, since someone wrote it there.
 */
export function resolveAdminToken(config: AppConfig): ResolvedAdminToken {
  if (config.adminToken) return { token: config.adminToken, generated: false };
  const file = join(config.dataDir, 'admin-token');
  if (existsSync(file)) {
    // Only the ASCII white space an editor or `echo` leaves around it: a token is printable ASCII.
    const token = readFileSync(file, 'utf8').replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
    if (token.length >= MIN_ADMIN_TOKEN_LENGTH) return { token, file, generated: false };
    if (token !== '') {
      throw new ConfigError(
        `The admin token in ${file} is shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters: put a longer one there, or delete the file to have one generated.`,
      );
    }
  }
  mkdirSync(config.dataDir, { recursive: true });
  const token = 'rba_' + randomBytes(32).toString('base64url');
  writeAtomically(file, token + '\n');
  return { token, file, generated: true };
}

/** A reader sees the old file or the whole new one, never an empty or half-written one. */
function writeAtomically(file: string, content: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
