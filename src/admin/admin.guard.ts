import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { setAuditActor } from '../audit/audit-context.js';
import { DomainError } from '../common/domain-error.js';
import { hashSecret, sameHash } from '../auth/secrets.js';
import { bearerToken } from '../common/bearer.js';
import { MIN_ADMIN_TOKEN_LENGTH } from '../config/config.js';
import { ADMIN_TOKEN } from './admin-token.js';

/**
 * `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. The token is everything after
 * `Bearer `, as sent: nothing is trimmed, so no byte of white space can stand in for a character.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(ADMIN_TOKEN) token: string) {
    if (token.length < MIN_ADMIN_TOKEN_LENGTH) throw new Error(`The admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long.`);
    this.expected = hashSecret(token);
  }

  canActivate(context: ExecutionContext): boolean {
    const token = bearerToken(context.switchToHttp().getRequest<Request>().headers.authorization);
    if (token === undefined || !sameHash(hashSecret(token), this.expected)) {
      throw new DomainError('unauthorized', 'Send the admin token as "Authorization: Bearer <ADMIN_TOKEN>".');
    }
    setAuditActor({ type: 'operator' });
    return true;
  }
}
