import fc from 'fast-check';
import { parsePastedLink, safeReturnTo } from './return-to.js';

const base = 'https://reblog.example.com';

describe('safeReturnTo', () => {
  it.each([
    ['/console/', '/console/'],
    ['/oauth/authorize?client_id=a&state=b#frag', '/oauth/authorize?client_id=a&state=b'],
    ['/a/../b', '/b'],
    ['/a/./b/', '/a/b/'],
    ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
    ['/x?next=//evil.example', '/x?next=//evil.example'],
  ])('keeps the path and query %j', (value, expected) => {
    expect(safeReturnTo(value, base)).toBe(expected);
  });

  it.each([
    'https://evil.test/',
    'https://reblog.example.com/console/',
    '//evil.test/x',
    '/\\evil.test',
    '/\t/evil.test',
    '/\n/evil.test',
    '\\\\evil.test',
    'console/',
    'javascript:alert(1)',
    '',
    '#x',
    '/' + 'a'.repeat(5000),
    42,
    null,
    ['/x'],
  ])('refuses %j', (value) => {
    expect(safeReturnTo(value, base)).toBeNull();
  });

  // Dot segments that the URL parser removes leave `//host`, which a browser reads as another host.
  it.each([
    '/.//evil.example/phish',
    '/x/..//evil.example',
    '/././/evil.example',
    '/%2e//evil.example',
    '/%2E%2E//evil.example',
    '/a/%2e%2e//evil.example',
    '/..//evil.example',
    '/.//\\evil.example',
  ])('refuses %j, a path that becomes //host once normalised', (value) => {
    expect(safeReturnTo(value, base)).toBeNull();
  });
});

/** Pieces a crafted return_to is made of: dot segments, slashes plain and encoded, backslashes, tabs and newlines, hosts, schemes. */
const PIECES = [
  '/',
  '/',
  '//',
  '.',
  '..',
  '%2e',
  '%2E',
  '%2e%2e',
  '.%2e',
  '%2f',
  '%2F',
  '%5c',
  '%5C',
  '\\',
  '\t',
  '\n',
  '\r',
  ' ',
  '%09',
  '%0a',
  '%00',
  '\u0000',
  '\u3002',
  '\uff0f',
  '\uff3c',
  'evil.example',
  'reblog.example.com',
  'a',
  '@',
  ':',
  '?',
  '#',
  '%',
  'http:',
  'https:',
  'javascript:',
  ';',
  '&',
];
const crafted = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }).map((p) => p.join('')),
  fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }).map((p) => '/' + p.join('')),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => '/' + s),
);

describe('safeReturnTo: properties', () => {
  it('answers null or a path on this server, as a browser resolves it, never another host', () => {
    fc.assert(
      fc.property(crafted, (value) => {
        const result = safeReturnTo(value, base);
        if (result === null) return;
        // One slash, then neither another one nor a backslash: not a network-path reference.
        expect(result).toMatch(/^\/(?![/\\])/);
        expect(result).not.toMatch(/[\u0000-\u001f\u007f\\]/);
        const here = new URL(result, base);
        expect(here.origin).toBe(base);
        // Resolved again it is itself: what a browser follows is exactly what was checked.
        expect(here.pathname + here.search).toBe(result);
        // Against any other base it stays on that base's host.
        expect(new URL(result, 'https://other.example/deep/page').host).toBe('other.example');
        expect(new URL(result, 'http://127.0.0.1:3000/').host).toBe('127.0.0.1:3000');
      }),
      { numRuns: 5000 },
    );
  });
});

describe('parsePastedLink', () => {
  const token = 'rbl_' + 'a'.repeat(43);
  it("takes a pasted link's return_to as sent; safeReturnTo then judges it", () => {
    const { returnTo } = parsePastedLink(`https://x.test/oauth/login?token=${token}&return_to=${encodeURIComponent('/.//evil.example/phish')}`);
    expect(returnTo).toBe('/.//evil.example/phish');
    expect(safeReturnTo(returnTo, base)).toBeNull();
  });
});
