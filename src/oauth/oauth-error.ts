import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

/**
 * Error codes of the OAuth answers: RFC 6749 §5.2 and §4.1.2.1, RFC 7591 §3.2.2, RFC 8707, and
 * `not_found` / `method_not_allowed` for paths and methods no RFC names.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'temporarily_unavailable'
  | 'server_error'
  | 'not_found'
  | 'method_not_allowed';

/** A refusal of an OAuth endpoint, answered as `{"error", "error_description"}` with its status and headers. */
export class OAuthError extends Error {
  override name = 'OAuthError';

  constructor(
    readonly error: OAuthErrorCode,
    description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

export interface OAuthErrorBody {
  error: OAuthErrorCode;
  error_description: string;
}

const CODE_OF_STATUS: Record<number, OAuthErrorCode> = {
  400: 'invalid_request',
  401: 'invalid_client',
  403: 'access_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'invalid_request',
  415: 'invalid_request',
  429: 'temporarily_unavailable',
};

/** The status, headers and body answering `err` on an OAuth path: an OAuthError as it is, any other client error by its status, the rest a 500. */
export function oauthErrorAnswer(err: unknown): { status: number; headers: Record<string, string>; body: OAuthErrorBody } {
  if (err instanceof OAuthError) return { status: err.status, headers: err.headers, body: { error: err.error, error_description: err.message } };
  // Body-parser errors (malformed JSON, too large) come as http-errors, or wrapped by Nest in an HttpException.
  const cause = err instanceof HttpException ? (err.cause ?? err) : err;
  const { status, type } = (cause ?? {}) as { status?: unknown; type?: unknown };
  if (typeof type === 'string' && typeof status === 'number' && status >= 400 && status < 500) {
    const description =
      type === 'entity.too.large'
        ? 'The request body is too large.'
        : type === 'entity.parse.failed'
          ? `The request body is not valid JSON (${(cause as Error).message}).`
          : (cause as Error).message;
    return { status, headers: {}, body: { error: CODE_OF_STATUS[status] ?? 'invalid_request', error_description: description } };
  }
  if (err instanceof HttpException && err.getStatus() < 500) {
    const status = err.getStatus();
    return { status, headers: {}, body: { error: CODE_OF_STATUS[status] ?? 'invalid_request', error_description: err.message } };
  }
  return { status: 500, headers: {}, body: { error: 'server_error', error_description: 'Something went wrong on our side; the error is logged. Try again.' } };
}

/** Sends an OAuth error answer. */
export function sendOAuthError(res: Response, err: unknown): void {
  const { status, headers, body } = oauthErrorAnswer(err);
  res.status(status).set(headers).json(body);
}

/** Every error of the OAuth controllers (and of their guards) as RFC-shaped JSON (docs/oauth.md#what-every-oauth-endpoint-shares). */
@Catch()
export class OAuthErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('OAuth');

  catch(err: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const answer = oauthErrorAnswer(err);
    // A 5xx the code chose (an OAuthError, such as 503 while metadata-document fetches are full) is an answer, not a fault.
    if (answer.status >= 500 && !(err instanceof OAuthError)) this.log.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    if (res.headersSent) return;
    res.status(answer.status).set(answer.headers).json(answer.body);
  }
}
