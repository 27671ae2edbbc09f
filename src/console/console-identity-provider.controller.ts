import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import { ConsoleService } from './console.service.js';
import { identityProviderPage, identityProviderPath } from './console-identity-provider.pages.js';
import { ConsoleIdentityProviderService, type IdentityProviderOutcome } from './console-identity-provider.service.js';

/**
 * The Identity provider page (owners only; a member gets the 404 page; docs/console.md#identity-provider):
 * register, change and remove the account's identity providers. Posts answer 303 back to the page,
 * or the page again with the registry's sentence when it refuses (nothing saved).
 */
@ApiExcludeController()
@UseFilters(ConsolePageFilter)
@UseGuards(ConsoleSessionGuard)
@Controller('console/accounts/:accountId/identity-provider')
export class ConsoleIdentityProviderController {
  constructor(
    private readonly providers: ConsoleIdentityProviderService,
    private readonly console: ConsoleService,
  ) {}

  @Get()
  async page(@Param('accountId') accountId: string, @Query('done') done: unknown, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    identityProviderPage(res, await this.console.frame(req.browserSession), await this.providers.page(req.browserSession.user, accountId), { done });
  }

  @Post()
  async create(@Param('accountId') accountId: string, @Body() form: Record<string, unknown>, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    await this.answer(req, res, accountId, await this.providers.create(req.browserSession.user, accountId, form ?? {}));
  }

  @Post(':id')
  async update(
    @Param('accountId') accountId: string,
    @Param('id') id: string,
    @Body() form: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    await this.answer(req, res, accountId, await this.providers.update(req.browserSession.user, accountId, id, form ?? {}));
  }

  @Post(':id/remove')
  async remove(@Param('accountId') accountId: string, @Param('id') id: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    await this.answer(req, res, accountId, await this.providers.remove(req.browserSession.user, accountId, id));
  }

  private async answer(req: ConsoleRequest, res: Response, accountId: string, outcome: IdentityProviderOutcome): Promise<void> {
    if ('done' in outcome) return res.redirect(303, `${identityProviderPath(accountId)}?done=${outcome.done}`);
    const user = req.browserSession.user;
    identityProviderPage(res, await this.console.frame(req.browserSession), await this.providers.page(user, accountId), { problem: outcome });
  }
}
