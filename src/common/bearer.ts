/**
 * The token of an `Authorization: Bearer <token>` header exactly as sent: the scheme in any case
 * (RFC 7235) and one space are taken off, nothing else. Trimming would make `<token>` plus a
 * no-break space (or any other whitespace) the same credential as `<token>`, and an empty one pass.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length <= 7 || header.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  return header.slice(7);
}
