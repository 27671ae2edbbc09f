import { DomainError } from '../common/domain-error.js';
import { ARTICLE_LIMITS, checkArticleFields } from './article-rules.js';

function failure(fields: Parameters<typeof checkArticleFields>[0]): DomainError {
  try {
    checkArticleFields(fields);
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('checkArticleFields accepted ' + JSON.stringify(fields).slice(0, 100));
}

describe('checkArticleFields', () => {
  it('accepts fields at their limits', () => {
    const ok = {
      title: 'x'.repeat(ARTICLE_LIMITS.titleMax),
      body: 'b'.repeat(ARTICLE_LIMITS.bodyMaxBytes),
      handle: 'a'.repeat(ARTICLE_LIMITS.handleMax),
      tags: Array.from({ length: 20 }, (_, i) => `t${i}`.padEnd(50, 'x')),
    };
    expect(checkArticleFields(ok)).toEqual(ok);
  });

  it('counts the title in characters, not UTF-16 units', () => {
    expect(() => checkArticleFields({ title: '🎉'.repeat(300) })).not.toThrow();
    expect(failure({ title: '🎉'.repeat(301) }).message).toBe('Invalid value for "title": must be at most 300 characters long.');
  });

  it.each([
    [{ title: '   ' }, 'Invalid value for "title": must be a non-empty string.'],
    [{ title: 'x'.repeat(301) }, 'Invalid value for "title": must be at most 300 characters long.'],
    [{ body: 'é'.repeat(ARTICLE_LIMITS.bodyMaxBytes / 2 + 1) }, 'Invalid value for "body": must be at most 1 MiB (1,048,576 bytes of UTF-8).'],
    [
      { handle: 'Hello World' },
      'Invalid value for "handle": must be lower-case letters a-z and digits, words joined by single hyphens (like "my-first-post").',
    ],
    [{ handle: 'a--b' }, 'Invalid value for "handle": must be lower-case letters a-z and digits, words joined by single hyphens (like "my-first-post").'],
    [{ handle: 'a'.repeat(121) }, 'Invalid value for "handle": must be at most 120 characters long.'],
    [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'Invalid value for "tags": at most 20 tags.'],
    [{ tags: ['ok', 'x'.repeat(51)] }, 'Invalid value for "tags.1": a tag must be at most 50 characters long.'],
    [{ tags: ['ok', '  '] }, 'Invalid value for "tags.1": a tag must not be empty.'],
    [{ excerpt: 'e'.repeat(2001) }, 'Invalid value for "excerpt": must be at most 2000 characters long.'],
  ])('refuses %#', (fields, message) => {
    const err = failure(fields);
    expect(err.code).toBe('invalid_arguments');
    expect(err.message).toBe(message);
  });

  it('trims and de-duplicates tags, keeping their order', () => {
    expect(checkArticleFields({ tags: [' b', 'a', 'b ', 'a'] }).tags).toEqual(['b', 'a']);
    // 21 tags that are 20 once de-duplicated are fine.
    expect(checkArticleFields({ tags: [...Array.from({ length: 20 }, (_, i) => `t${i}`), 't0'] }).tags).toHaveLength(20);
  });

  it('leaves absent fields absent', () => {
    expect(checkArticleFields({})).toEqual({});
  });
});
