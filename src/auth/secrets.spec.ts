import { GRANT_PREFIX, KEY_PREFIX, hashSecret, hashSecretBase64, newSecret, sameHash } from './secrets.js';

describe('secrets', () => {
  it('hashSecretBase64 is the stored hash as base64 (the principal cache key and the stored hash must agree)', () => {
    for (const prefix of [KEY_PREFIX, GRANT_PREFIX]) {
      const { secret, hash } = newSecret(prefix);
      expect(hashSecretBase64(secret)).toBe(hash.toString('base64'));
      expect(sameHash(Buffer.from(hashSecretBase64(secret), 'base64'), hashSecret(secret))).toBe(true);
    }
    expect(hashSecretBase64('rbk_a')).not.toBe(hashSecretBase64('rbk_b'));
  });

  it('sameHash tells different and differently sized hashes apart', () => {
    expect(sameHash(hashSecret('a'), hashSecret('b'))).toBe(false);
    expect(sameHash(hashSecret('a'), hashSecret('a').subarray(1))).toBe(false);
  });
});
