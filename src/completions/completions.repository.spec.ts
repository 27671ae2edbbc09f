import { likePrefix, uuidRange } from './completions.repository.js';

describe('likePrefix', () => {
  it("ends in % and takes LIKE's own characters and the backslash literally", () => {
    expect(likePrefix('bread')).toBe('bread%');
    expect(likePrefix('')).toBe('%');
    expect(likePrefix('50%_off\\')).toBe('50\\%\\_off\\\\%');
  });
});

describe('uuidRange', () => {
  it('bounds every uuid whose text starts with the prefix', () => {
    expect(uuidRange('')).toEqual(['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']);
    expect(uuidRange('0bad')).toEqual(['0bad0000-0000-0000-0000-000000000000', '0badffff-ffff-ffff-ffff-ffffffffffff']);
    expect(uuidRange('01234567-')).toEqual(['01234567-0000-0000-0000-000000000000', '01234567-ffff-ffff-ffff-ffffffffffff']);
    const id = '01a235a7-42d4-71f3-aa91-7d40983f1218';
    expect(uuidRange(id)).toEqual([id, id]);
  });

  it('is undefined where no uuid can start so', () => {
    for (const prefix of ['g', '0123456-', '012345678', '01234567-0000-0000-0000-0000000000000', 'ABCD', '%']) expect(uuidRange(prefix)).toBeUndefined();
  });
});
