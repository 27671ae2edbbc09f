import { DomainError } from './domain-error.js';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether the text is an ISO 8601 time whose fields exist (Date would take February 31st as March 3rd). */
function realTime(value: string): boolean {
  if (!ISO_TIME.test(value)) return false;
  const [y, mo, d, h, mi, s] = value.split(/[-T:.Z+]/).map(Number);
  return mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate() && h <= 23 && mi <= 59 && (Number.isNaN(s) || s <= 59);
}

/** A time bound: a valid Date, or an ISO 8601 time with its offset (a time without one would depend on the server's zone). */
export function timeBound(value: string | Date | undefined, field: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = value instanceof Date ? value : typeof value === 'string' && realTime(value) ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime()))
    throw new DomainError('validation_failed', `${field} must be a time in ISO 8601 with its offset, e.g. 2026-11-30T12:00:00Z.`, { field });
  return date;
}
