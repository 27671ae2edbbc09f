import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'rbk_';
export const GRANT_PREFIX = 'rbg_';

/** A new bearer secret: 256 random bits behind a readable type prefix. */
export function newSecret(prefix: string): { secret: string; hash: Buffer; visiblePrefix: string } {
  const secret = prefix + randomBytes(32).toString('base64url');
  return { secret, hash: hashSecret(secret), visiblePrefix: secret.slice(0, prefix.length + 8) };
}

/** Secrets are long random strings: a plain SHA-256 is enough to store them without keeping them. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** {@link hashSecret} as base64 text, in one call without a Hash object: a per-request cache key. */
export function hashSecretBase64(secret: string): string {
  return hash('sha256', secret, 'base64');
}

export function sameHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
