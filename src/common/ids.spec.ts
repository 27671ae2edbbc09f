import { validate, version } from 'uuid';
import { isUuid, newId } from './ids.js';

describe('newId', () => {
  it('makes valid UUID v7s that always increase, also many within one millisecond and across the random pool refills', () => {
    const ids = Array.from({ length: 5_000 }, () => newId());
    for (const id of ids) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      expect(isUuid(id)).toBe(true);
    }
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('starts with the current time in milliseconds', () => {
    const before = Date.now();
    const ms = parseInt(newId().replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
  });
});
