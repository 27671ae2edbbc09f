import { Controller, Get, Param, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { auditPage } from './console-audit.pages.js';
import { ConsoleAuditService } from './console-audit.service.js';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import type { Frame } from './console.pages.js';
import { ConsoleService } from './console.service.js';

/** The console's Audit page and its CSV export (docs/console.md#audit): owners only, all GET. */
@ApiExcludeController()
@UseFilters(ConsolePageFilter)
@UseGuards(ConsoleSessionGuard)
@Controller('console')
export class ConsoleAuditController {
  constructor(
    private readonly audit: ConsoleAuditService,
    private readonly console: ConsoleService,
  ) {}

  @Get('accounts/:accountId/audit')
  async page(@Param('accountId') accountId: string, @Query() query: Record<string, unknown>, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    auditPage(res, await this.frame(req), await this.audit.page(req.browserSession.user, accountId, query));
  }

  @Get('accounts/:accountId/audit/export')
  async exportCsv(
    @Param('accountId') accountId: string,
    @Query() query: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    const out = await this.audit.exportCsv(req.browserSession.user, accountId, query);
    if (!('csv' in out)) return auditPage(res, await this.frame(req), out);
    res.status(200).set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${out.filename}"`,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    await pipeline(out.csv, res).catch(() => undefined);
  }

  private async frame(req: ConsoleRequest): Promise<Frame> {
    const session = req.browserSession;
    return { email: session.user.email, csrf: session.csrf, several: (await this.console.accounts(session.user)).length > 1 };
  }
}
