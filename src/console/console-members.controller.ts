import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import { accountPath } from './console.pages.js';
import { ConsoleService } from './console.service.js';
import { memberPage, membersPage, signInLinkPage } from './console-members.pages.js';
import { ConsoleMembersService } from './console-members.service.js';

/**
 * The console's Members pages (owners only; a member gets the 404 page). Posts answer 303 to a page
 * (POST-redirect-GET), or the form again with the services' sentence when refused; the sign-in link
 * is shown in the post's own answer, never put into a URL.
 */
@ApiExcludeController()
@UseFilters(ConsolePageFilter)
@UseGuards(ConsoleSessionGuard)
@Controller('console/accounts/:accountId/members')
export class ConsoleMembersController {
  constructor(
    private readonly members: ConsoleMembersService,
    private readonly console: ConsoleService,
  ) {}

  @Get()
  async list(
    @Param('accountId') accountId: string,
    @Query('done') done: unknown,
    @Query('cursor') cursor: unknown,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    membersPage(res, await this.console.frame(req.browserSession), await this.members.members(req.browserSession.user, accountId, cursor), { done });
  }

  @Post()
  async add(@Param('accountId') accountId: string, @Body() form: Record<string, unknown>, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    const user = req.browserSession.user;
    const outcome = await this.members.add(user, accountId, form ?? {});
    if ('added' in outcome) return res.redirect(303, `${accountPath(accountId, 'members')}?done=added`);
    membersPage(res, await this.console.frame(req.browserSession), await this.members.members(user, accountId), outcome);
  }

  @Get(':userId')
  async member(@Param('accountId') accountId: string, @Param('userId') userId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    memberPage(res, await this.console.frame(req.browserSession), await this.members.member(req.browserSession.user, accountId, userId));
  }

  @Post(':userId')
  async change(
    @Param('accountId') accountId: string,
    @Param('userId') userId: string,
    @Body() form: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    const user = req.browserSession.user;
    const outcome = await this.members.changeRoles(user, accountId, userId, form ?? {});
    // An owner who made themselves a member no longer sees this page: their overview.
    if ('changed' in outcome)
      return res.redirect(303, outcome.changed === 'self_demoted' ? accountPath(accountId) : `${accountPath(accountId, 'members')}?done=changed`);
    memberPage(res, await this.console.frame(req.browserSession), await this.members.member(user, accountId, userId), outcome);
  }

  @Post(':userId/remove')
  async remove(@Param('accountId') accountId: string, @Param('userId') userId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    const user = req.browserSession.user;
    const outcome = await this.members.remove(user, accountId, userId);
    if ('changed' in outcome) return res.redirect(303, outcome.changed === 'self_removed' ? '/console/' : `${accountPath(accountId, 'members')}?done=removed`);
    memberPage(res, await this.console.frame(req.browserSession), await this.members.member(user, accountId, userId), outcome);
  }

  @Post(':userId/sign-in-link')
  async signInLink(@Param('accountId') accountId: string, @Param('userId') userId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    const outcome = await this.members.signInLink(req.browserSession.user, accountId, userId);
    const frame = await this.console.frame(req.browserSession);
    // The link is a secret: shown in this answer only (no redirect, no URL carries it).
    if ('link' in outcome) return signInLinkPage(res, frame, outcome.member, outcome.link);
    memberPage(res, frame, outcome.member, outcome);
  }
}
