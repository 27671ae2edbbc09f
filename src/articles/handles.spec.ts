import { HANDLE_MAX, HANDLE_PATTERN, handleCandidates, handleFromTitle, withSuffix } from './handles.js';

describe('handleFromTitle', () => {
  it.each([
    ['Hello World', 'hello-world'],
    ['Héllo Wörld!', 'hello-world'],
    ['Crème brûlée & café', 'creme-brulee-and-cafe'],
    ['  --Hello--World--  ', 'hello-world'],
    ['Straße in Łódź', 'strasse-in-lodz'],
    ['Привет мир', 'privet-mir'],
    ["It's a title", 'its-a-title'],
    ['v1.2/a_b: notes', 'v1-2-a-b-notes'],
    ['Emoji 🎉 party ✓', 'emoji-party'],
    ['UPPER lower 123', 'upper-lower-123'],
  ])('%j → %j', (title, handle) => {
    expect(handleFromTitle(title)).toBe(handle);
  });

  it('falls back to "article" when nothing of the title is ASCII-foldable', () => {
    expect(handleFromTitle('日本語')).toBe('article');
    expect(handleFromTitle('🎉🎉')).toBe('article');
    expect(handleFromTitle('---')).toBe('article');
  });

  it('always answers a valid handle of at most HANDLE_MAX characters, without a trailing hyphen', () => {
    const long = handleFromTitle('word '.repeat(100));
    expect(long.length).toBeLessThanOrEqual(HANDLE_MAX);
    expect(long).toMatch(HANDLE_PATTERN);
    for (const title of ['a', 'A — B', 'x'.repeat(500), '  ', '-a-', 'über-ärger']) expect(handleFromTitle(title)).toMatch(HANDLE_PATTERN);
  });
});

describe('withSuffix / handleCandidates', () => {
  it('appends -n from 2 on, and keeps the base as the first candidate', () => {
    expect(withSuffix('intro', 1)).toBe('intro');
    expect(withSuffix('intro', 2)).toBe('intro-2');
    expect(handleCandidates('intro', 1, 4)).toEqual(['intro', 'intro-2', 'intro-3', 'intro-4']);
    expect(handleCandidates('intro', 21, 2)).toEqual(['intro-21', 'intro-22']);
  });

  it('shortens a long base so that the suffixed handle stays within HANDLE_MAX and valid', () => {
    const base = handleFromTitle('abc-'.repeat(60));
    expect(base.length).toBeLessThanOrEqual(HANDLE_MAX);
    for (const n of [2, 10, 1234]) {
      const h = withSuffix(base, n);
      expect(h.length).toBeLessThanOrEqual(HANDLE_MAX);
      expect(h).toMatch(HANDLE_PATTERN);
      expect(h.endsWith(`-${n}`)).toBe(true);
    }
  });
});
