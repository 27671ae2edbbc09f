import { All, Body, Controller, Get, NotFoundException, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import { accountPath, accountsPage, appsPage, keyCreatedPage, keysPage, overviewPage } from './console.pages.js';
import { ConsoleService } from './console.service.js';

/**
 * The owners' console (docs/console.md), server-rendered: Accounts, Overview, Connected apps and API
 * keys. Every route needs a browser session and every post its csrf (ConsoleSessionGuard); every id
 * is checked against the person by ConsoleService. Posts answer 303 to the page they came from
 * (POST-redirect-GET), except the new key's, whose secret must not go into a URL.
 */
@ApiExcludeController()
@UseFilters(ConsolePageFilter)
@UseGuards(ConsoleSessionGuard)
@Controller('console')
export class ConsoleController {
  constructor(private readonly console: ConsoleService) {}

  // `/console/` (where a sign-in lands) is matched by the catch-all below: with strict routing a
  // controller's own path has no trailing slash.
  @Get()
  async accounts(@Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    const accounts = await this.console.accounts(req.browserSession.user);
    if (accounts.length === 1) return res.redirect(303, accountPath(accounts[0].account_id));
    accountsPage(res, req.browserSession.user.email, accounts);
  }

  @Get('accounts/:accountId')
  async overview(@Param('accountId') accountId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    overviewPage(res, await this.console.frame(req.browserSession), await this.console.overview(req.browserSession.user, accountId));
  }

  @Get('accounts/:accountId/apps')
  async apps(@Param('accountId') accountId: string, @Query('done') done: unknown, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    appsPage(res, await this.console.frame(req.browserSession), await this.console.apps(req.browserSession.user, accountId), done);
  }

  @Post('accounts/:accountId/apps/:grantId/disconnect')
  async disconnect(@Param('accountId') accountId: string, @Param('grantId') grantId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    await this.console.disconnect(req.browserSession.user, accountId, grantId);
    res.redirect(303, `${accountPath(accountId, 'apps')}?done=disconnected`);
  }

  @Get('accounts/:accountId/keys')
  async keys(@Param('accountId') accountId: string, @Query('done') done: unknown, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    keysPage(res, await this.console.frame(req.browserSession), await this.console.keys(req.browserSession.user, accountId), { done });
  }

  @Post('accounts/:accountId/keys')
  async createKey(
    @Param('accountId') accountId: string,
    @Body() form: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    const user = req.browserSession.user;
    const outcome = await this.console.createKey(user, accountId, form ?? {});
    const frame = await this.console.frame(req.browserSession);
    // The secret is shown in this answer and nowhere else (never in a URL, never stored): no redirect.
    if ('created' in outcome) return keyCreatedPage(res, frame, await this.console.ownedAccount(user, accountId), outcome.created);
    keysPage(res, frame, await this.console.keys(user, accountId), { form: outcome.form, problem: outcome.problem });
  }

  @Post('accounts/:accountId/keys/:keyId/revoke')
  async revokeKey(@Param('accountId') accountId: string, @Param('keyId') keyId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    await this.console.revokeKey(req.browserSession.user, accountId, keyId);
    res.redirect(303, `${accountPath(accountId, 'keys')}?done=revoked`);
  }

  /** `/console/` is the accounts page; anything else under /console the console's 404 page (after the session check, like every page). */
  @All('{*path}')
  async rest(@Param('path') path: string[] | undefined, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    if (req.method === 'GET' && !path?.some((part) => part !== '')) return this.accounts(req, res);
    throw new NotFoundException();
  }
}
