import { Body, Controller, Get, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { OAuthErrorFilter } from '../oauth-error.js';
import { AuthorizeService } from './authorize.service.js';
import { BrowserSessionGuard, type PageRequest } from './browser-session.guard.js';
import { sendOutcome } from './consent-page.js';

/** The pages a person sees while connecting an app: `GET /oauth/authorize` and the consent form's `POST /oauth/consent`. */
@ApiExcludeController()
@UseFilters(OAuthErrorFilter)
@UseGuards(BrowserSessionGuard)
@Controller('oauth')
export class AuthorizeController {
  constructor(private readonly authorizations: AuthorizeService) {}

  @Get('authorize')
  async authorize(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    sendOutcome(res, await this.authorizations.authorize(req.query as Record<string, unknown>, req.browserSession, req.originalUrl));
  }

  @Post('consent')
  async consent(@Body() form: Record<string, unknown>, @Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const fetchSite = req.headers['sec-fetch-site'];
    sendOutcome(res, await this.authorizations.consent(form ?? {}, req.browserSession, { origin: req.headers.origin, secFetchSite: typeof fetchSite === 'string' ? fetchSite : undefined }));
  }
}
