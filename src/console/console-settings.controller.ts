import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import { ConsoleService } from './console.service.js';
import { settingsPage, settingsPath } from './console-settings.pages.js';
import { ConsoleSettingsService } from './console-settings.service.js';

/**
 * Project settings in the console (owners; docs/console.md#project-settings): the project's disabled tools and the
 * writer's config with its versions. The same session, csrf and 404 rules as every console page.
 */
@ApiExcludeController()
@UseFilters(ConsolePageFilter)
@UseGuards(ConsoleSessionGuard)
@Controller('console/accounts/:accountId/projects/:projectId/settings')
export class ConsoleSettingsController {
  constructor(
    private readonly settings: ConsoleSettingsService,
    private readonly console: ConsoleService,
  ) {}

  @Get()
  async page(
    @Param('accountId') accountId: string,
    @Param('projectId') projectId: string,
    @Query('done') done: unknown,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    settingsPage(res, await this.console.frame(req.browserSession), await this.settings.settings(req.browserSession.user, accountId, projectId), { done });
  }

  @Post('tools')
  async tools(
    @Param('accountId') accountId: string,
    @Param('projectId') projectId: string,
    @Body() form: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    await this.settings.setTools(req.browserSession.user, accountId, projectId, form ?? {});
    res.redirect(303, `${settingsPath(accountId, projectId)}?done=tools`);
  }

  @Post('writer')
  async writer(
    @Param('accountId') accountId: string,
    @Param('projectId') projectId: string,
    @Body() form: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    const user = req.browserSession.user;
    const outcome = await this.settings.saveWriter(user, accountId, projectId, form ?? {});
    if ('problem' in outcome) {
      return settingsPage(res, await this.console.frame(req.browserSession), await this.settings.settings(user, accountId, projectId), {
        answers: outcome.answers,
        problem: outcome.problem,
      });
    }
    res.redirect(303, `${settingsPath(accountId, projectId)}?done=${'saved' in outcome ? 'writer' : 'unchanged'}`);
  }
}
