import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { DomainError } from '../common/domain-error.js';
import { hashSecret, sameHash } from '../auth/secrets.js';
import { ADMIN_TOKEN } from './admin-token.js';

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(ADMIN_TOKEN) token: string) {
    this.expected = hashSecret(token);
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<Request>().headers.authorization ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    if (!match || !sameHash(hashSecret(match[1].trim()), this.expected)) {
      throw new DomainError('unauthorized', 'Send the admin token as "Authorization: Bearer <ADMIN_TOKEN>".');
    }
    return true;
  }
}
