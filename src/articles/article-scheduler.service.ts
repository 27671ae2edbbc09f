import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { ArticleTrashService } from './article-trash.service.js';
import { ArticlesRepository } from './articles.repository.js';

/** How often each worker instance looks for scheduled articles that are due. */
export const PUBLISH_EVERY_MS = 1_000;
/** How often each worker instance purges the expired trash. */
export const PURGE_EVERY_MS = 60 * 60 * 1_000;
/** Articles published per transaction. */
const PUBLISH_BATCH = 200;

/**
 * Publishes scheduled articles when their time comes, and purges the expired trash — on every
 * instance with ROLE=worker or all. Postgres decides both: its clock says what is due, and
 * `FOR UPDATE SKIP LOCKED` hands each due article to exactly one instance, whose transaction
 * keeps the scheduled state as a revision and publishes it. The timers only say how often to ask.
 */
@Injectable()
export class ArticleSchedulerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger(ArticleSchedulerService.name);
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly articles: ArticlesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly trash: ArticleTrashService,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.role === 'api') return;
    this.every(PUBLISH_EVERY_MS, 'publish scheduled articles', () => this.publishDue());
    this.every(PURGE_EVERY_MS, 'purge the trash', () => this.trash.purgeExpired(), 10_000);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    await Promise.allSettled([...this.running]);
  }

  /** Publishes every scheduled article whose time has come; answers how many this call published. */
  async publishDue(): Promise<number> {
    let published = 0;
    for (;;) {
      const n = await this.db.transaction(async (m) => {
        const ids = await this.articles.lockDue(PUBLISH_BATCH, m);
        if (!ids.length) return 0;
        // A system change across tenants: the revision names no credential and no account.
        await this.articles.recordRevisions(ids, null, null, m);
        await this.articles.publishScheduled(ids, m);
        return ids.length;
      });
      published += n;
      if (n < PUBLISH_BATCH) return published;
    }
  }

  /** Runs `task` every `ms` (the first time after `firstAfterMs`), never twice at once, until shutdown. */
  private every(ms: number, what: string, task: () => Promise<unknown>, firstAfterMs = ms): void {
    const slot = this.timers.length;
    const tick = () => {
      if (this.stopped) return;
      const run = task()
        .catch((err: Error) => this.log.warn(`Could not ${what}: ${err.message}`))
        .finally(() => {
          this.running.delete(run);
          if (!this.stopped) this.timers[slot] = setTimeout(tick, ms).unref();
        });
      this.running.add(run);
    };
    this.timers.push(setTimeout(tick, firstAfterMs).unref());
  }
}
