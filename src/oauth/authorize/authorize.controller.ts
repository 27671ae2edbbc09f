import { Body, Controller, Get, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { IpRateLimiter } from '../../rate-limit/ip-rate-limit.js';
import { PagePolicy } from '../../web/page-policy.js';
import { OAuthErrorFilter } from '../oauth-error.js';
import { AuthorizeService } from './authorize.service.js';
import { BrowserSessionGuard, type PageRequest } from './browser-session.guard.js';
import { sendOutcome, tryLaterPage } from './consent-page.js';

/** The pages a person sees while connecting an app: `GET /oauth/authorize` and the consent form's `POST /oauth/consent`. */
@ApiExcludeController()
@UseFilters(OAuthErrorFilter)
@UseGuards(BrowserSessionGuard)
@Controller('oauth')
export class AuthorizeController {
  constructor(
    private readonly authorizations: AuthorizeService,
    private readonly limiter: IpRateLimiter,
    private readonly pages: PagePolicy,
  ) {}

  /** Counted per IP like the other OAuth endpoints (OAUTH_IP_RATE_LIMIT_PER_MINUTE): a request may fetch a metadata document. */
  @Get('authorize')
  async authorize(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const { allowed, retryAfterS } = await this.limiter.take('authorize', req.ip ?? req.socket.remoteAddress ?? 'unknown');
    if (!allowed)
      return sendOutcome(res, tryLaterPage(429, `Too many connection requests came from your address. Try again in ${retryAfterS} seconds.`, retryAfterS));
    sendOutcome(res, await this.authorizations.authorize(req.query as Record<string, unknown>, req.browserSession, req.originalUrl));
  }

  @Post('consent')
  async consent(@Body() form: Record<string, unknown>, @Req() req: PageRequest, @Res() res: Response): Promise<void> {
    sendOutcome(res, await this.authorizations.consent(form ?? {}, req.browserSession, this.pages.crossSite(req)));
  }
}
