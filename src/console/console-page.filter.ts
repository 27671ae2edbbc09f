import { Catch, NotFoundException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError } from '../common/domain-error.js';
import { ConsoleFormRefused, ConsoleHostRefused, ConsoleSignInRequired, type ConsoleRequest } from './console-session.guard.js';
import { hostRefusedPage, notFoundPage, refusedPage } from './console.pages.js';

/**
 * The console's answers to what stops a request, as pages: not signed in → 303 to the sign-in page
 * (back here after); a Host this server does not serve → 403; a refused post → 403; not_found (an id that does not exist or that the person
 * may not see: the same page) → 404.
 */
@Catch(ConsoleSignInRequired, ConsoleHostRefused, ConsoleFormRefused, DomainError, NotFoundException)
export class ConsolePageFilter implements ExceptionFilter {
  catch(err: Error, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<ConsoleRequest>();
    const res = host.switchToHttp().getResponse<Response>();
    const email = req.browserSession?.user.email ?? null;
    if (err instanceof ConsoleSignInRequired) {
      res.redirect(303, `/oauth/login?return_to=${encodeURIComponent(err.returnTo)}`);
    } else if (err instanceof ConsoleHostRefused) {
      hostRefusedPage(res, err.host);
    } else if (err instanceof ConsoleFormRefused) {
      refusedPage(res, email);
    } else if (err instanceof NotFoundException || (err instanceof DomainError && err.code === 'not_found')) {
      notFoundPage(res, email);
    } else {
      // Any other domain error is a bug of the console's own checks: never a page that hides it.
      throw err;
    }
  }
}
