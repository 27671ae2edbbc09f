import type { WrittenDraft } from './ai.types.js';

// Elements removed with everything up to their closing tag.
const WITH_CONTENT = new Set(['script', 'style', 'iframe', 'object', 'applet', 'frameset', 'noembed', 'noframes']);
// Elements without content: only the tag goes.
const TAG_ONLY = ['embed', 'frame', 'base', 'meta', 'link'];
const ELEMENT = new RegExp(`<(/?)(${[...WITH_CONTENT, ...TAG_ONLY].join('|')})(?![\\w:-])`, 'gi');

const NAMED_ENTITIES: Record<string, string> = {
  colon: ':',
  tab: '\t',
  newline: '\n',
  lpar: '(',
  rpar: ')',
  sol: '/',
  bsol: '\\',
  period: '.',
  comma: ',',
  semi: ';',
  amp: '&',
  quot: '"',
  apos: "'",
  lt: '<',
  gt: '>',
  excl: '!',
  num: '#',
  equals: '=',
};

/** Passes over the text before it is taken to be built to nest constructs (see {@link sanitizeText}). */
const MAX_PASSES = 10;

/**
 * Makes untrusted markdown/HTML text safe to store and render: removes `<script>`, `<style>`,
 * `<iframe>`, `<object>`, `<embed>` (and their kin), `on*=` attributes, and `javascript:`,
 * `vbscript:` and non-image `data:` targets in HTML attributes and markdown links. Ordinary
 * markdown comes out unchanged; the result is stable (sanitizing it again changes nothing).
 *
 * HTML is read as a browser's tokenizer reads it (white space is ASCII's: tab, LF, FF, CR, space;
 * U+00A0 and other Unicode spaces are text), markdown links as CommonMark finds them, leniently.
 * Every scan is linear in the text's length, whatever the input: no pattern backtracks over a run,
 * and no position is rescanned per occurrence of something before it (`npm run bench:sanitize`).
 */
export function sanitizeText(text: string): string {
  // NUL and other control characters have no place in text (and Postgres refuses NUL).
  let current = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
  // Removing one construct can join the pieces of another ("<scr<script></script>ipt>"); repeat until stable.
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const next = cleanMarkdownLinks(cleanAttributes(removeElements(current)));
    if (next === current) return current;
    current = next;
  }
  // Still changing: the input nests removals on purpose, and each pass peels one layer. Rather than
  // pass over it as many times as it has layers, keep no HTML at all: with every "<" escaped there is
  // no element and no attribute, and nothing left to remove joins. Then settle the markdown links,
  // whose replacements ("#") join nothing either (one more pass, kept in the loop for certainty).
  current = current.replace(/</g, '&lt;');
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const next = cleanMarkdownLinks(current);
    if (next === current) break;
    current = next;
  }
  return current;
}

/** A writer's draft with every field sanitized; blank and repeated tags dropped. Apply it before storing. */
export function sanitizeDraft(draft: WrittenDraft): WrittenDraft {
  // Title and tags are single lines. White space is folded before sanitizing: folded after, a U+00A0
  // (text to HTML) would become a space that opens an attribute ("<img\u00a0onerror=..."). What the
  // sanitizer removes may leave two spaces side by side, which fold again (that joins nothing).
  const line = (text: string) => sanitizeText(text.replace(/\s+/g, ' ')).replace(/ {2,}/g, ' ').trim();
  const seen = new Set<string>();
  const tags: string[] = [];
  for (const tag of draft.tags ?? []) {
    const clean = line(String(tag));
    const key = clean.toLowerCase();
    if (!clean || seen.has(key)) continue;
    seen.add(key);
    tags.push(clean);
  }
  return {
    title: line(draft.title ?? ''),
    excerpt: sanitizeText(draft.excerpt ?? '').trim(),
    body: sanitizeText(draft.body ?? ''),
    tags,
  };
}

/** True for link targets that run code: `javascript:`, `vbscript:`, and `data:` other than raster images. */
export function isDangerousUrl(value: string): boolean {
  const url = normalizeUrl(value);
  if (/^(?:javascript|vbscript|livescript):/.test(url)) return true;
  return url.startsWith('data:') && !/^data:image\/(?:png|gif|jpe?g|webp|avif|bmp)[;,]/.test(url);
}

// Decoded the way a browser or a markdown renderer would read it, minus the spaces and control
// characters browsers ignore inside a scheme.
function normalizeUrl(value: string): string {
  return decodeEntities(value.replace(/\\([!-/:-@[-`{-~])/g, '$1'))
    .replace(/[\u0000-\u0020\u007f-\u009f]/g, '')
    .toLowerCase();
}

function decodeEntities(text: string): string {
  return text.replace(/&(?:#x([0-9a-f]+)|#(\d+)|([a-z]+));?/gi, (match, hex?: string, dec?: string, name?: string) => {
    if (name) return NAMED_ENTITIES[name.toLowerCase()] ?? match;
    const code = parseInt(hex ?? dec ?? '', hex ? 16 : 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
  });
}

/** Removes the dangerous elements wherever their tags appear, even inside another tag or a code block. */
function removeElements(text: string): string {
  let out = '';
  let last = 0;
  const unclosed = new Set<string>();
  ELEMENT.lastIndex = 0;
  for (let m = ELEMENT.exec(text); m; m = ELEMENT.exec(text)) {
    const name = m[2].toLowerCase();
    const close = text.indexOf('>', ELEMENT.lastIndex);
    let end = close < 0 ? text.length : close + 1;
    if (!m[1] && WITH_CONTENT.has(name) && !unclosed.has(name)) {
      const closing = new RegExp(`</${name}(?![\\w:-])[^>]*>?`, 'gi');
      closing.lastIndex = end;
      const found = closing.exec(text);
      // Remembered so a run of unclosed tags stays linear; the tag alone goes, its text stays inert.
      if (found) end = found.index + found[0].length;
      else unclosed.add(name);
    }
    out += text.slice(last, m.index);
    last = end;
    ELEMENT.lastIndex = end;
  }
  return out + text.slice(last);
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** HTML's white space (the tokenizer's): tab, LF, FF, CR and space, not JavaScript's `\s`. */
const isHtmlSpace = (c: string | undefined) => c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '\f';

/**
 * Reads every tag the way a browser does (quoted values may hold `>`) and drops event handlers and
 * attributes holding a script URL. `<` and `>` inside values are escaped (the browser decodes them
 * back), so no region this scanner took for a value can hide a tag from a browser.
 */
function cleanAttributes(text: string): string {
  const edits: Edit[] = [];
  const tag = /<[a-zA-Z][^\t\n\f\r />]*/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    let i = tag.lastIndex;
    for (;;) {
      const spaceStart = i;
      while (i < text.length && (isHtmlSpace(text[i]) || text[i] === '/')) i++;
      if (i >= text.length || text[i] === '>') break;
      const nameStart = i++;
      while (i < text.length && !isHtmlSpace(text[i]) && text[i] !== '/' && text[i] !== '>' && text[i] !== '=') i++;
      const name = text.slice(nameStart, i).toLowerCase();
      let value: string | undefined;
      let valueStart = i;
      let j = i;
      while (j < text.length && isHtmlSpace(text[j])) j++;
      if (text[j] === '=') {
        j++;
        while (j < text.length && isHtmlSpace(text[j])) j++;
        const quote = text[j];
        if (quote === '"' || quote === "'") {
          const closing = text.indexOf(quote, j + 1);
          valueStart = j + 1;
          value = text.slice(valueStart, closing < 0 ? text.length : closing);
          i = closing < 0 ? text.length : closing + 1;
        } else {
          valueStart = j;
          while (j < text.length && !isHtmlSpace(text[j]) && text[j] !== '>') j++;
          value = text.slice(valueStart, j);
          i = j;
        }
      }
      if (isDangerousAttribute(name, value)) {
        edits.push({ start: spaceStart, end: i, text: '' });
      } else if (value !== undefined && /[<>]/.test(value)) {
        edits.push({ start: valueStart, end: valueStart + value.length, text: value.replace(/</g, '&lt;').replace(/>/g, '&gt;') });
      }
    }
    tag.lastIndex = Math.min(i + 1, text.length);
    if (i >= text.length) break;
  }
  return applyEdits(text, edits);
}

function isDangerousAttribute(name: string, value: string | undefined): boolean {
  // Every on* attribute, not a list of known handlers: browsers keep adding events.
  if (/^on./.test(name)) return true;
  if (value === undefined) return false;
  const normalized = normalizeUrl(value);
  if (isDangerousUrl(value) || /(?:java|vb)script:|data:text\/html/.test(normalized)) return true;
  return name === 'style' && /expression\(|-moz-binding|behavior:/.test(normalized);
}

/**
 * Replaces script targets in markdown links, images and reference definitions with `#`, and removes
 * autolinks to them. Every `](` and `]:` is looked at, also inside the destination of another link:
 * a renderer that gives up on the outer link may take the inner one (`[a](x][b](javascript:...)`).
 */
function cleanMarkdownLinks(text: string): string {
  const edits: Edit[] = [];
  const stops = new NextStop(text, /[>\n]/g);
  // Inline links and images: [text](destination "title"). Renderers differ on the spaces before the
  // destination (CommonMark: ASCII ones and one line break; others: any \s): skip them all.
  for (let at = text.indexOf(']('), skipTo = 0; at >= 0; at = text.indexOf('](', at + 1)) {
    if (at < skipTo) continue; // inside a destination already replaced
    let start = at + 2;
    while (start < text.length && isSpace(text[start])) start++;
    const angle = text[start] === '<';
    if (!startsDangerously(text, start, angle ? isAngleEnd : isSpace)) continue;
    const end = angle ? angleEnd(text, start, stops) : plainEnd(text, start);
    edits.push({ start, end, text: '#' });
    skipTo = end;
  }
  // Reference definitions: [id]: destination, on the same line or the next (LF, CR LF or CR).
  for (let at = text.indexOf(']:'), skipTo = 0; at >= 0; at = text.indexOf(']:', at + 1)) {
    if (at < skipTo) continue;
    let start = skipBlanks(text, at + 2);
    if (text.startsWith('\r\n', start)) start += 2;
    else if (text[start] === '\n' || text[start] === '\r') start++;
    start = skipBlanks(text, start);
    if (start >= text.length || isSpace(text[start])) continue;
    const angle = text[start] === '<';
    if (!startsDangerously(text, start, angle ? isAngleEnd : isSpace)) continue;
    // `<...>` when it closes on its line, else (like any destination) the run up to a space.
    const stop = angle ? stops.after(start) : -1;
    const end = stop >= 0 && text[stop] === '>' ? stop + 1 : runEnd(text, start);
    edits.push({ start, end, text: '#' });
    skipTo = end;
  }
  // Autolinks: <scheme:...>, which CommonMark ends at ASCII controls and spaces only.
  const autolink = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\u0000-\u0020\u007f<>]*)>/g;
  for (let m = autolink.exec(text); m; m = autolink.exec(text)) {
    if (isDangerousUrl(m[1])) edits.push({ start: m.index, end: m.index + m[0].length, text: '' });
  }
  return applyEdits(text, edits);
}

/** Markdown renderers differ on white space; taking JavaScript's (Unicode's) ends destinations early, never late. */
const isSpace = (c: string) => /\s/.test(c);
const isAngleEnd = (c: string) => c === '>' || c === '\n';

/**
 * Whether the destination at `start` (ending before the first `isEnd` character) runs code. Only its
 * start can make it so (the scheme, and a data: URL's type), and a `]` never belongs to a dangerous
 * start: so the read stops at the first `]`, where the next `](` or `]:` begins. However links nest,
 * each character is read for one destination at most.
 */
function startsDangerously(text: string, start: number, isEnd: (c: string) => boolean): boolean {
  let end = start;
  while (end < text.length && !isEnd(text[end]) && text[end] !== ']') end++;
  if (text[end] === ']') end++;
  return isDangerousUrl(text.slice(start, end).replace(/^</, ''));
}

/** End of an inline destination `<...>`: after its `>`, else at the end of the line. */
function angleEnd(text: string, start: number, stops: NextStop): number {
  const stop = stops.after(start);
  if (stop < 0) return text.length;
  return text[stop] === '>' ? stop + 1 : stop;
}

/** End of an inline destination that is not `<...>`: a space or an unbalanced `)`. */
function plainEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (isSpace(c)) break;
    else if (c === '(') depth++;
    else if (c === ')' && depth-- === 0) break;
  }
  return Math.min(i, text.length);
}

/** End of the run of non-space characters at `start`. */
function runEnd(text: string, start: number): number {
  let i = start;
  while (i < text.length && !isSpace(text[i])) i++;
  return i;
}

/** Skips white space other than line breaks: CommonMark's spaces and tabs, and the Unicode spaces other renderers trim. */
function skipBlanks(text: string, i: number): number {
  while (i < text.length && text[i] !== '\n' && text[i] !== '\r' && isSpace(text[i])) i++;
  return i;
}

/**
 * The next match of `pattern` at or after a position, for positions that only grow: a match found
 * once answers every later question before it, so a text is searched once in all (the scan for
 * `<...>` destinations used to search to the end of the line for each one).
 */
class NextStop {
  private at = -1;
  private from = Infinity;

  constructor(
    private readonly text: string,
    private readonly pattern: RegExp,
  ) {}

  /** Index of the first match at or after `from`, or -1. */
  after(from: number): number {
    if (from >= this.from && (this.at < 0 || from <= this.at)) return this.at;
    this.pattern.lastIndex = from;
    this.at = this.pattern.exec(this.text)?.index ?? -1;
    this.from = from;
    return this.at;
  }
}

/** Applies edits (possibly overlapping: the first one to start wins) from left to right. */
function applyEdits(text: string, edits: Edit[]): string {
  if (!edits.length) return text;
  edits.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let last = 0;
  for (const edit of edits) {
    if (edit.start < last) continue;
    out += text.slice(last, edit.start) + edit.text;
    last = edit.end;
  }
  return out + text.slice(last);
}
