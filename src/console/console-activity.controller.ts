import { Controller, Get, Param, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { activityPage, entryPage } from './console-activity.pages.js';
import { ConsoleActivityService } from './console-activity.service.js';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import { sendCsv } from './console.pages.js';
import { ConsoleService } from './console.service.js';

/**
 * The console's Activity pages (docs/console.md#activity): the log with its filters, chart and pages, one
 * entry, and the CSV export of the filtered rows. All GET (nothing changes): the session guard and
 * the page filter are the console's; every id is checked by ConsoleActivityService.
 */
@ApiExcludeController()
@UseFilters(ConsolePageFilter)
@UseGuards(ConsoleSessionGuard)
@Controller('console')
export class ConsoleActivityController {
  constructor(
    private readonly activity: ConsoleActivityService,
    private readonly console: ConsoleService,
  ) {}

  @Get('accounts/:accountId/activity')
  async log(@Param('accountId') accountId: string, @Query() query: Record<string, unknown>, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    activityPage(res, await this.console.frame(req.browserSession), await this.activity.page(req.browserSession.user, accountId, query));
  }

  /** The filtered rows as a CSV download (streamed), or the page saying which filter is refused (400). */
  @Get('accounts/:accountId/activity/export')
  async exportCsv(
    @Param('accountId') accountId: string,
    @Query() query: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    const out = await this.activity.exportCsv(req.browserSession.user, accountId, query);
    if (!('csv' in out)) return activityPage(res, await this.console.frame(req.browserSession), out);
    await sendCsv(res, out.filename, out.csv);
  }

  @Get('accounts/:accountId/activity/:entryId')
  async entry(@Param('accountId') accountId: string, @Param('entryId') entryId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    entryPage(res, await this.console.frame(req.browserSession), await this.activity.entry(req.browserSession.user, accountId, entryId));
  }
}
