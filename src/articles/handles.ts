import slugify from 'slugify';

/** Lower-case ASCII words joined by single hyphens. */
export const HANDLE_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const HANDLE_MAX = 120;

/** A handle from a title: unicode folded to ASCII, lower-case, words joined by hyphens. */
export function handleFromTitle(title: string): string {
  // Punctuation that joins words ("a/b", "v1.2", "snake_case") separates them in the handle; strict mode
  // would glue them together. Apostrophes still vanish ("it's" → "its").
  const spaced = title.replace(/[\s_./\\|:;,+()[\]{}<>!?"=~*#@^`]+/g, ' ');
  const slug = slugify(spaced, { lower: true, strict: true, trim: true, locale: 'en' }).replace(/-+/g, '-').replace(/^-|-$/g, '');
  return trimHandle(slug, HANDLE_MAX) || 'article';
}

/** `base` with the suffix `-n` (n ≥ 2), shortened so that the whole stays within {@link HANDLE_MAX}. */
export function withSuffix(base: string, n: number): string {
  if (n < 2) return base;
  const suffix = `-${n}`;
  return `${trimHandle(base, HANDLE_MAX - suffix.length) || 'article'}${suffix}`;
}

/** `count` candidates in the order they are tried: `base`, `base-2`, `base-3`... starting at the `from`-th. */
export function handleCandidates(base: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => withSuffix(base, from + i));
}

function trimHandle(handle: string, max: number): string {
  return handle.length <= max ? handle : handle.slice(0, max).replace(/-+$/, '');
}
