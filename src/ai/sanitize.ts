import type { WrittenDraft } from './ai.types.js';

// Elements removed with everything up to their closing tag.
const WITH_CONTENT = new Set(['script', 'style', 'iframe', 'object', 'applet', 'frameset', 'noembed', 'noframes']);
// Elements without content: only the tag goes.
const TAG_ONLY = ['embed', 'frame', 'base', 'meta', 'link'];
const ELEMENT = new RegExp(`<(/?)(${[...WITH_CONTENT, ...TAG_ONLY].join('|')})(?![\\w:-])`, 'gi');

const NAMED_ENTITIES: Record<string, string> = {
  colon: ':', tab: '\t', newline: '\n', lpar: '(', rpar: ')', sol: '/', bsol: '\\', period: '.', comma: ',',
  semi: ';', amp: '&', quot: '"', apos: "'", lt: '<', gt: '>', excl: '!', num: '#', equals: '=',
};

/**
 * Makes untrusted markdown/HTML text safe to store and render: removes `<script>`, `<style>`,
 * `<iframe>`, `<object>`, `<embed>` (and their kin), `on*=` attributes, and `javascript:`,
 * `vbscript:` and non-image `data:` targets in HTML attributes and markdown links. Ordinary
 * markdown comes out unchanged; the result is stable (sanitizing it again changes nothing).
 */
export function sanitizeText(text: string): string {
  // NUL and other control characters have no place in text (and Postgres refuses NUL).
  let current = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
  // Removing one construct can join the pieces of another ("<scr<script></script>ipt>"); repeat until stable.
  for (let pass = 0; pass < 10; pass++) {
    const next = cleanMarkdownLinks(cleanAttributes(removeElements(current)));
    if (next === current) break;
    current = next;
  }
  return current;
}

/** A writer's draft with every field sanitized; blank and repeated tags dropped. Apply it before storing. */
export function sanitizeDraft(draft: WrittenDraft): WrittenDraft {
  // Title and tags are single lines: removals must not leave doubled or stray whitespace.
  const line = (text: string) => sanitizeText(text).replace(/\s+/g, ' ').trim();
  const tags = (draft.tags ?? []).map((tag) => line(String(tag))).filter(Boolean);
  return {
    title: line(draft.title ?? ''),
    excerpt: sanitizeText(draft.excerpt ?? '').trim(),
    body: sanitizeText(draft.body ?? ''),
    tags: tags.filter((tag, i) => tags.findIndex((t) => t.toLowerCase() === tag.toLowerCase()) === i),
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

/**
 * Reads every tag the way a browser does (quoted values may hold `>`) and drops event handlers and
 * attributes holding a script URL. `<` and `>` inside values are escaped (the browser decodes them
 * back), so no region this scanner took for a value can hide a tag from a browser.
 */
function cleanAttributes(text: string): string {
  const edits: Edit[] = [];
  const tag = /<[a-zA-Z][^\s/>]*/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    let i = tag.lastIndex;
    for (;;) {
      const spaceStart = i;
      while (i < text.length && /[\s/]/.test(text[i])) i++;
      if (i >= text.length || text[i] === '>') break;
      const nameStart = i++;
      while (i < text.length && !/[\s/>=]/.test(text[i])) i++;
      const name = text.slice(nameStart, i).toLowerCase();
      let value: string | undefined;
      let valueStart = i;
      let j = i;
      while (j < text.length && /\s/.test(text[j])) j++;
      if (text[j] === '=') {
        j++;
        while (j < text.length && /\s/.test(text[j])) j++;
        const quote = text[j];
        if (quote === '"' || quote === "'") {
          const closing = text.indexOf(quote, j + 1);
          valueStart = j + 1;
          value = text.slice(valueStart, closing < 0 ? text.length : closing);
          i = closing < 0 ? text.length : closing + 1;
        } else {
          valueStart = j;
          while (j < text.length && !/[\s>]/.test(text[j])) j++;
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

/** Replaces script targets in markdown links, images, reference definitions and autolinks with `#`. */
function cleanMarkdownLinks(text: string): string {
  const edits: Edit[] = [];
  // Inline links and images: [text](destination "title").
  const opener = /\]\(\s*/g;
  for (let m = opener.exec(text); m; m = opener.exec(text)) {
    const start = opener.lastIndex;
    const end = destinationEnd(text, start);
    if (isDangerousUrl(text.slice(start, end).replace(/^<|>$/g, ''))) edits.push({ start, end, text: '#' });
    opener.lastIndex = Math.max(end, start);
  }
  // Reference definitions: [id]: destination.
  const reference = /\]:[ \t]*\n?[ \t]*(<[^>\n]*>|\S+)/g;
  for (let m = reference.exec(text); m; m = reference.exec(text)) {
    if (isDangerousUrl(m[1].replace(/^<|>$/g, ''))) edits.push({ start: m.index + m[0].length - m[1].length, end: m.index + m[0].length, text: '#' });
  }
  // Autolinks: <scheme:...>.
  const autolink = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*)>/g;
  for (let m = autolink.exec(text); m; m = autolink.exec(text)) {
    if (isDangerousUrl(m[1])) edits.push({ start: m.index, end: m.index + m[0].length, text: '' });
  }
  return applyEdits(text, edits);
}

/** End of a link destination starting at `start`: `<...>`, or up to a space or an unbalanced `)`. */
function destinationEnd(text: string, start: number): number {
  if (text[start] === '<') {
    const close = text.slice(start).search(/[>\n]/);
    return close < 0 ? text.length : start + close + (text[start + close] === '>' ? 1 : 0);
  }
  let depth = 0;
  let i = start;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (/\s/.test(c)) break;
    else if (c === '(') depth++;
    else if (c === ')' && depth-- === 0) break;
  }
  return Math.min(i, text.length);
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
