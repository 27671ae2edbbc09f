import slugify from 'slugify';

export const HANDLE_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const HANDLE_MAX = 120;

/** A handle from a title: unicode folded to ASCII, lower-case, words joined by hyphens. */
export function handleFromTitle(title: string): string {
  const handle = slugify(title, { lower: true, strict: true, trim: true }).slice(0, HANDLE_MAX).replace(/-+$/, '');
  return handle || 'article';
}
