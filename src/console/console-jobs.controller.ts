import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ConsolePageFilter } from './console-page.filter.js';
import { ConsoleSessionGuard, type ConsoleRequest } from './console-session.guard.js';
import { accountPath } from './console.pages.js';
import { ConsoleService } from './console.service.js';
import { jobsPage } from './console-jobs.pages.js';
import { ConsoleJobsService } from './console-jobs.service.js';

/**
 * The console's Jobs page: every person of the account sees the jobs of the projects they see (an
 * owner all of them), and cancels a queued or running one where their role allows cancel_job.
 */
@ApiExcludeController()
@UseFilters(ConsolePageFilter)
@UseGuards(ConsoleSessionGuard)
@Controller('console/accounts/:accountId/jobs')
export class ConsoleJobsController {
  constructor(
    private readonly jobs: ConsoleJobsService,
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
    jobsPage(res, await this.console.frame(req.browserSession), await this.jobs.list(req.browserSession.user, accountId, cursor), { done });
  }

  @Post(':jobId/cancel')
  async cancel(@Param('accountId') accountId: string, @Param('jobId') jobId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    const user = req.browserSession.user;
    const problem = await this.jobs.cancel(user, accountId, jobId);
    if (problem === null) return res.redirect(303, `${accountPath(accountId, 'jobs')}?done=cancelled`);
    // It had finished already: the page as it is now, with the service's sentence.
    jobsPage(res, await this.console.frame(req.browserSession), await this.jobs.list(user, accountId), { problem, status: 409 });
  }

  /** An image a job made, under the session (the page's thumbnails): /media/:id wants a bearer credential. */
  @Get('images/:mediaId')
  async image(@Param('accountId') accountId: string, @Param('mediaId') mediaId: string, @Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    const media = await this.jobs.image(req.browserSession.user, accountId, mediaId);
    res
      .status(200)
      .set({
        'Content-Type': media.mime_type,
        'Content-Length': String(media.data.length),
        'Cache-Control': 'private, no-store',
        'X-Content-Type-Options': 'nosniff',
        'Content-Disposition': 'inline',
      })
      .end(media.data);
  }
}
