import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { DomainError } from './domain-error.js';
import { isUuid } from './ids.js';

/** `?limit=&cursor=` of every admin list. */
export class PageQuery {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  @IsOptional() @IsString() cursor?: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Lists are ordered by UUID v7 id, newest first; the cursor is the last id seen, made opaque. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isUuid(id)) throw new DomainError('validation_failed', 'The cursor is not one this API returned; start again without it.');
  return id;
}

/** Builds a page from `limit + 1` rows fetched newest first. */
export function toPage<T extends { id: string }, R>(rows: T[], limit: number, map: (row: T) => R): Page<R> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return {
    items: items.map(map),
    next_cursor: more ? Buffer.from(items[items.length - 1].id, 'utf8').toString('base64url') : null,
  };
}
