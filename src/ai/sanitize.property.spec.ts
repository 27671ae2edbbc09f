import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sanitizeDraft, sanitizeText } from './sanitize.js';

const { fragments } = JSON.parse(readFileSync(join(__dirname, 'sanitize.fragments.json'), 'utf8')) as { fragments: string[] };

/*
 * Properties of the sanitizer, checked against an oracle written from the specifications rather than
 * from sanitize.ts: a tokenizer following the HTML tokenizer's states (ASCII whitespace only,
 * comments, quoted and unquoted values, character references) and CommonMark's link destinations.
 * The oracle reads every `<` outside a comment as a browser in the data state would (stricter than a
 * browser inside <textarea> or <script>), and every `](`, `]:` and `<scheme:` as a link.
 */

const BLOCKED_ELEMENTS = new Set([
  'script',
  'style',
  'iframe',
  'object',
  'applet',
  'frameset',
  'noembed',
  'noframes',
  'embed',
  'frame',
  'base',
  'meta',
  'link',
]);
const HTML_SPACE = new Set(['\t', '\n', '\f', '\r', ' ']);
const isAlpha = (c: string | undefined) => c !== undefined && /^[A-Za-z]$/.test(c);

interface Tag {
  name: string;
  attributes: { name: string; value: string }[];
}

/** The start tags a browser's tokenizer emits (and unterminated ones, which it would drop). */
function browserStartTags(html: string): Tag[] {
  const tags: Tag[] = [];
  const n = html.length;
  let i = 0;
  const skipTo = (s: string, from: number) => {
    const at = html.indexOf(s, from);
    return at < 0 ? n : at + s.length;
  };
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    i = lt + 1;
    if (html.startsWith('!--', i)) {
      i += 3;
      if (html[i] === '>') i += 1;
      else if (html.startsWith('->', i)) i += 2;
      else {
        const end = /--!?>/g;
        end.lastIndex = i;
        i = end.exec(html) ? end.lastIndex : n;
      }
    } else if (html[i] === '!' || html[i] === '?') {
      i = skipTo('>', i); // doctype, CDATA outside foreign content, bogus comment
    } else if (html[i] === '/') {
      if (isAlpha(html[i + 1]))
        i = readTag(i + 1).end; // end tags are tokenized like start tags, then their attributes dropped
      else if (html[i + 1] === '>') i += 2;
      else i = skipTo('>', i);
    } else if (isAlpha(html[i])) {
      const { tag, end } = readTag(i);
      tags.push(tag);
      i = end;
    }
  }
  return tags;

  function readTag(start: number): { tag: Tag; end: number } {
    let j = start;
    while (j < n && !HTML_SPACE.has(html[j]) && html[j] !== '/' && html[j] !== '>') j++;
    const tag: Tag = { name: html.slice(start, j).toLowerCase(), attributes: [] };
    for (;;) {
      while (j < n && (HTML_SPACE.has(html[j]) || html[j] === '/')) j++;
      if (j >= n) return { tag, end: n };
      if (html[j] === '>') return { tag, end: j + 1 };
      const nameStart = j++; // a first "=" belongs to the name
      while (j < n && !HTML_SPACE.has(html[j]) && html[j] !== '/' && html[j] !== '>' && html[j] !== '=') j++;
      const name = html.slice(nameStart, j).toLowerCase();
      let k = j;
      while (k < n && HTML_SPACE.has(html[k])) k++;
      let value = '';
      if (html[k] === '=') {
        k++;
        while (k < n && HTML_SPACE.has(html[k])) k++;
        if (html[k] === '"' || html[k] === "'") {
          const close = html.indexOf(html[k], k + 1);
          value = html.slice(k + 1, close < 0 ? n : close);
          j = close < 0 ? n : close + 1;
        } else {
          const valueStart = k;
          while (k < n && !HTML_SPACE.has(html[k]) && html[k] !== '>') k++;
          value = html.slice(valueStart, k);
          j = k;
        }
      }
      tag.attributes.push({ name, value: decodeReferences(value) });
    }
  }
}

/** HTML character references as an attribute value decodes them (numeric, and the named ones that spell a scheme). */
function decodeReferences(text: string): string {
  const named: Record<string, string> = {
    Tab: '\t',
    NewLine: '\n',
    colon: ':',
    amp: '&',
    lt: '<',
    gt: '>',
    quot: '"',
    apos: "'",
    lpar: '(',
    rpar: ')',
    sol: '/',
  };
  return text.replace(/&(?:#[xX]([0-9a-fA-F]+);?|#([0-9]+);?|([A-Za-z]+);)/g, (m, hex?: string, dec?: string, name?: string) => {
    if (name) return named[name] ?? m;
    const code = parseInt(hex ?? dec ?? '', hex ? 16 : 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
  });
}

/** What the sanitizer promises to remove from a URL: javascript:, vbscript: (livescript:), and data: other than raster images. */
function runsCode(url: string): boolean {
  // The URL parser trims C0 controls and spaces, and drops tabs and newlines anywhere.
  const u = url
    .replace(/[\t\n\r]/g, '')
    .replace(/^[\u0000-\u0020]+/, '')
    .toLowerCase();
  if (/^(?:javascript|vbscript|livescript):/.test(u)) return true;
  return u.startsWith('data:') && !/^data:image\/(?:png|gif|jpe?g|webp|avif|bmp)[;,]/.test(u);
}

/** Markdown link destinations: inline `](dest`, reference definitions `]: dest`, autolinks `<scheme:...>`. */
function markdownDestinations(text: string): string[] {
  const found: string[] = [];
  const unescape = (s: string) => decodeReferences(s.replace(/\\([!-/:-@[-`{-~])/g, '$1'));
  // CommonMark: `<...>` without line endings, or a run without ASCII spaces or controls; its start decides the scheme.
  const destination = (from: number) => {
    if (text[from] === '<') {
      const close = text.slice(from + 1).search(/[>\n\r]/);
      if (close >= 0 && text[from + 1 + close] === '>') return text.slice(from + 1, from + 1 + close);
    }
    const end = text.slice(from).search(/[\u0000-\u0020\u007f]/);
    return text.slice(from, end < 0 ? text.length : from + end);
  };
  // Before a destination, CommonMark skips spaces, tabs and one line break; other renderers any white space.
  for (const m of text.matchAll(/\]\(\s*/g)) found.push(unescape(destination(m.index + m[0].length)));
  for (const m of text.matchAll(/\]:[^\S\r\n]*(?:\r\n|\n|\r)?[^\S\r\n]*/g)) found.push(unescape(destination(m.index + m[0].length)));
  for (const m of text.matchAll(/<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\u0000-\u0020\u007f<>]*)>/g)) found.push(m[1]);
  return found;
}

/** What would run or load in the sanitized text, as a browser and a markdown renderer read it; empty when safe. */
function dangers(text: string): string[] {
  const out: string[] = [];
  for (const tag of browserStartTags(text)) {
    if (BLOCKED_ELEMENTS.has(tag.name)) out.push(`element <${tag.name}>`);
    for (const { name, value } of tag.attributes) {
      if (/^on./.test(name)) out.push(`handler ${name} on <${tag.name}>`);
      const squeezed = value.replace(/[\u0000-\u0020]/g, '').toLowerCase();
      if (runsCode(value) || /(?:java|vb)script:|data:text\/html/.test(squeezed)) out.push(`${name}="${value}" on <${tag.name}>`);
    }
  }
  for (const url of markdownDestinations(text)) if (runsCode(url)) out.push(`link ${url}`);
  return out;
}

const htmlish = fc
  .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, fc.string({ maxLength: 3, unit: 'grapheme' })), { maxLength: 40 })
  .map((parts) => parts.join(''));
const anyText = fc.oneof(fc.string({ maxLength: 200, unit: 'binary' }), htmlish);
const RUNS = { numRuns: 3_000 };

describe('the oracle', () => {
  it.each([
    ['<img src=x onerror=alert(1)>', true],
    ['<a title=\u00a0"a onerror=alert(1)">', true],
    ['<a title="\u00a0onerror=alert(1)">', false],
    ['<!-- <img src=x onerror=alert(1)> -->', false],
    ['<!-- --> <img src=x onerror=alert(1)>', true],
    ['<a href="&#106;ava&#x73;cript&colon;alert(1)">', true],
    ['<a href="java&Tab;script:x">', true],
    ['<SCRIPT>', true],
    ['<scrip t>', false],
    ['[x](javascript:alert(1))', true],
    ['[x]( <javascript:alert(1)>)', true],
    ['[r]:\r\n  javascript:alert(1)', true],
    ['[r]:\n\njavascript:alert(1)', false],
    ['<javascript:alert(1)\u00a0x>', true],
    ['<img src="data:image/png;base64,AAAA">', false],
    ['[x](data:image/svg+xml,<svg>)', true],
    ['plain javascript: text', false],
  ])('reads %j as %s', (text, dangerous) => {
    expect(dangers(text).length > 0).toBe(dangerous);
  });
});

describe('sanitizeText, for arbitrary and HTML-ish strings', () => {
  it('leaves nothing that runs: no blocked element, event handler, or script / HTML data URL', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(dangers(sanitizeText(text))).toEqual([]);
      }),
      RUNS,
    );
  });

  it('is idempotent: sanitizing its output changes nothing', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = sanitizeText(text);
        expect(sanitizeText(once)).toBe(once);
      }),
      RUNS,
    );
  });
});

describe('sanitizeDraft, for arbitrary and HTML-ish fields', () => {
  it('gives fields that are safe, already sanitized, and the same when sanitized again', () => {
    const draft = fc.record({ title: anyText, excerpt: anyText, body: anyText, tags: fc.array(anyText, { maxLength: 4 }) });
    fc.assert(
      fc.property(draft, (d) => {
        const clean = sanitizeDraft(d);
        for (const field of [clean.title, clean.excerpt, clean.body, ...clean.tags]) {
          expect(dangers(field)).toEqual([]);
          expect(sanitizeText(field)).toBe(field);
        }
        expect(sanitizeDraft(clean)).toEqual(clean);
      }),
      { numRuns: 1_000 },
    );
  });
});
