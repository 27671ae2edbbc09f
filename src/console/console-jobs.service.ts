import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error.js';
import type { Page } from '../common/pagination.js';
import { mayCancelJobs } from '../jobs/cancel-rule.js';
import { JobsService, type JobView } from '../jobs/jobs.service.js';
import { MediaService } from '../media/media.service.js';
import type { Media } from '../media/media.entity.js';
import type { User } from '../users/user.js';
import { ConsoleService, type ConsoleAccount } from './console.service.js';

/** Jobs listed on one page. */
export const JOBS_PAGE = 50;

export interface JobsData extends ConsoleAccount {
  jobs: JobView[];
  next_cursor: string | null;
  /** The projects where the person may cancel a job. */
  cancellable: Set<string>;
}

/**
 * The console's Jobs page (docs/console.md#jobs): the write_article and generate_image jobs of the
 * projects the person sees (every project of the account for an owner), and cancelling one, through
 * JobsService's cancel, the path cancel_job takes, under the same rule (CANCEL_JOB in jobs/): a job
 * of a project where the person's role is below it is as unknown to it as another account's.
 */
@Injectable()
export class ConsoleJobsService {
  constructor(
    private readonly console: ConsoleService,
    private readonly jobs: JobsService,
    private readonly media: MediaService,
  ) {}

  /** A page of the jobs, newest first. */
  async list(user: User, accountId: string, cursor?: unknown): Promise<JobsData> {
    const place = await this.console.account(user, accountId);
    let page: Page<JobView>;
    try {
      page = await this.jobs.list(
        place.membership.account_id,
        { project_ids: place.projects.map((p) => p.project_id) },
        JOBS_PAGE,
        typeof cursor === 'string' && cursor ? cursor : undefined,
      );
    } catch (err) {
      // A cursor this page did not make: the same 404 as any id that is not there.
      if (err instanceof DomainError && err.code === 'validation_failed') throw DomainError.notFound('jobs page', String(cursor));
      throw err;
    }
    return { ...place, jobs: page.items, next_cursor: page.next_cursor, cancellable: new Set(cancelProjects(place)) };
  }

  /**
   * Cancels a queued or running job; answers null when done, or the service's sentence when the job
   * had finished already. A job the person may not cancel is not_found.
   */
  async cancel(user: User, accountId: string, jobId: string): Promise<string | null> {
    const place = await this.console.account(user, accountId);
    try {
      await this.jobs.cancel(place.membership.account_id, cancelProjects(place), jobId);
      return null;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'invalid_state') return err.message;
      throw err;
    }
  }

  /** An image a job of a project the person sees made (the page shows it under the session, not a bearer). */
  async image(user: User, accountId: string, mediaId: string): Promise<Media> {
    const place = await this.console.account(user, accountId);
    const media = await this.media.findWithData(
      place.membership.account_id,
      place.projects.map((p) => p.project_id),
      mediaId,
    );
    if (!media) throw DomainError.notFound('image', mediaId);
    return media;
  }
}

function cancelProjects(place: ConsoleAccount): string[] {
  return place.projects.filter((p) => mayCancelJobs(p.role)).map((p) => p.project_id);
}
