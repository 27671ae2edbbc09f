import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError, type DomainErrorCode } from './domain-error.js';

const STATUS: Record<DomainErrorCode, number> = {
  validation_failed: 400,
  invalid_arguments: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  version_conflict: 409,
  handle_taken: 409,
  invalid_state: 409,
  unprocessable: 422,
  too_many_jobs: 429,
  rate_limited: 429,
  unavailable: 503,
  not_confirmed: 409,
  timeout: 504,
};

const CODE_OF_STATUS: Record<number, string> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'rate_limited',
  503: 'unavailable',
};

/**
 * Maps every error on the REST side to `{"error":{"code","message","details"?}}` with its HTTP status; a
 * 429 whose details carry `retry_after_ms` also says it as `Retry-After` (whole seconds, at least 1).
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('HttpError');

  catch(err: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const { status, body } = this.map(err);
    if (status >= 500) this.log.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    if (res.headersSent) return;
    const retryAfterMs = (body.details as { retry_after_ms?: unknown } | undefined)?.retry_after_ms;
    if (status === 429 && typeof retryAfterMs === 'number') res.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    res.status(status).json({ error: body });
  }

  private map(err: unknown): { status: number; body: { code: string; message: string; details?: unknown } } {
    if (err instanceof DomainError) {
      return { status: STATUS[err.code], body: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) } };
    }
    // Errors of the body parser (too large, malformed JSON, wrong charset) carry an HTTP status; Nest wraps them in an
    // HttpException whose message is the parser's own ("request entity too large"), which tells a person little.
    const parser = bodyParserError(err instanceof HttpException ? err.cause : err);
    if (parser) return parser;
    if (err instanceof HttpException) {
      const status = err.getStatus();
      const response = err.getResponse() as string | { message?: string | string[] };
      const messages = typeof response === 'object' && Array.isArray(response.message) ? response.message : undefined;
      const message = messages
        ? `Invalid request: ${messages.join('; ')}.`
        : typeof response === 'string'
          ? response
          : (response.message as string) || err.message;
      return { status, body: { code: CODE_OF_STATUS[status] ?? 'error', message, ...(messages ? { details: messages } : {}) } };
    }
    // Other http-errors that reach the filter unwrapped keep their client status.
    const rawStatus = (err as { status?: unknown } | undefined)?.status;
    if (typeof rawStatus === 'number' && rawStatus >= 400 && rawStatus < 500) {
      return { status: rawStatus, body: { code: CODE_OF_STATUS[rawStatus] ?? 'bad_request', message: (err as Error).message } };
    }
    return { status: 500, body: { code: 'internal_error', message: 'Something went wrong on our side; the error is logged. Try again.' } };
  }
}

/** body-parser's errors: an http-errors object with a `type` such as `entity.too.large` or `entity.parse.failed`. */
function bodyParserError(err: unknown): { status: number; body: { code: string; message: string } } | undefined {
  const { status, type } = (err ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status !== 'number' || typeof type !== 'string' || status < 400 || status >= 500) return undefined;
  if (type === 'entity.too.large') return { status, body: { code: 'payload_too_large', message: 'The request body is larger than 1 MiB.' } };
  if (type === 'entity.parse.failed') {
    return { status, body: { code: 'invalid_json', message: `The request body is not valid JSON (${(err as Error).message}).` } };
  }
  return { status, body: { code: CODE_OF_STATUS[status] ?? 'bad_request', message: (err as Error).message } };
}
