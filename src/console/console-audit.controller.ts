import { Controller, Get, Param, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { auditPage } from './console-audit.pages.js';
import { ConsoleAuditService } from './console-audit.service.js';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import { sendCsv } from './console.pages.js';
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
    auditPage(res, await this.console.frame(req.browserSession), await this.audit.page(req.browserSession.user, accountId, query));
  }

  @Get('accounts/:accountId/audit/export')
  async exportCsv(
    @Param('accountId') accountId: string,
    @Query() query: Record<string, unknown>,
    @Req() req: ConsoleRequest,
    @Res() res: Response,
  ): Promise<void> {
    const out = await this.audit.exportCsv(req.browserSession.user, accountId, query);
    if (!('csv' in out)) return auditPage(res, await this.console.frame(req.browserSession), out);
    await sendCsv(res, out.filename, out.csv);
  }
}
