import { Controller, Get, Param, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { activityPage, entryPage } from './console-activity.pages.js';
import { ConsoleActivityService } from './console-activity.service.js';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import type { Frame } from './console.pages.js';
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
    activityPage(res, await this.frame(req), await this.activity.page(req.browserSession.user, accountId, query));
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
    if (!('csv' in out)) return activityPage(res, await this.frame(req), out);
    res.status(200).set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${out.filename}"`,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    // A failure mid-stream can no longer change the status: the download is cut short (pipeline destroys the response).
    await pipeline(out.csv, res).catch(() => undefined);
  }

  @Get('accounts/:accountId/activity/:entryId')
  async entry(@Param('accountId') accountId: string, @Param('entryId') entryId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    entryPage(res, await this.frame(req), await this.activity.entry(req.browserSession.user, accountId, entryId));
  }

  private async frame(req: ConsoleRequest): Promise<Frame> {
    const session = req.browserSession;
    return { email: session.user.email, csrf: session.csrf, several: (await this.console.accounts(session.user)).length > 1 };
  }
}
