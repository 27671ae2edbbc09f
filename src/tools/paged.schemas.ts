/** `page`/`page_size` arguments of the listing tools, as docs/protocol.md#articles describes them. */
export const PAGE_ARGS = {
  // A bound keeps page × page_size an offset PostgreSQL can take (a bigint); no listing has a millionth page.
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
  page_size: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
} as const;

/** The output schema of a page of `item`s: `{"items": [...], "pagination": {total, page, page_size, pages}}`. */
export function pagedOutput(item: Record<string, unknown>) {
  return {
    type: 'object' as const,
    properties: {
      items: { type: 'array', items: item },
      pagination: {
        type: 'object',
        properties: { total: { type: 'integer' }, page: { type: 'integer' }, page_size: { type: 'integer' }, pages: { type: 'integer' } },
        required: ['total', 'page', 'page_size', 'pages'],
      },
    },
    required: ['items', 'pagination'],
  };
}
