import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { BrowserSessionsService, type BrowserSession } from '../../web/browser-sessions.service.js';

/** A request of the OAuth pages, with the signed-in browser session (null when nobody is signed in). */
export interface PageRequest extends Request {
  browserSession: BrowserSession | null;
}

/** Reads the `rb_session` cookie once, for the page's handler; it never refuses (the handler decides). */
@Injectable()
export class BrowserSessionGuard implements CanActivate {
  constructor(private readonly sessions: BrowserSessionsService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<PageRequest>();
    req.browserSession = await this.sessions.current(req);
    return true;
  }
}
