import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { isUuid, newId } from '../common/ids.js';
import type { ProjectScope } from '../projects/project-scope.js';
import { ArticleListingService, type ArticleListing, type ListArticlesQuery } from './article-listing.service.js';
import { checkArticleFields, type ArticleFields } from './article-rules.js';
import type { Article, ArticleStatus } from './article.entity.js';
import { articleView, type ArticleView } from './article.views.js';
import { ArticlesRepository, isHandleClash, type ContextSampleRow } from './articles.repository.js';
import { handleCandidates, handleFromTitle } from './handles.js';

export type { ArticleListing, ListArticlesQuery } from './article-listing.service.js';

export interface NewArticle {
  title: string;
  body?: string;
  handle?: string;
  excerpt?: string;
  tags?: string[];
  status?: ArticleStatus;
  /** With status published: a future time schedules the article instead. */
  published_at?: Date | null;
  source?: 'human' | 'ai';
  job_id?: string | null;
  agent_config_version?: number | null;
}

/** Who makes a change: the credential is kept on the revision (null for the system or an admin). */
export interface Actor {
  credentialId: string | null;
}

/** Candidates probed per query when looking for a free handle. */
const HANDLE_BATCH = 20;
/** Beyond this many suffixes something is wrong (or someone is filling a project with one title). */
const HANDLE_SUFFIX_LIMIT = 10_000;

const notFound = (id: string) => new DomainError('not_found', `No article with id "${id}" in this project.`);

/** A write of one locked article, in the caller's transaction, answering the article as written. */
type Write = (m: EntityManager) => Promise<Article>;

/**
 * Articles of a project: reads, and writes that lose nothing. Every change of an existing article
 * (update, publish, delete, scheduler, restore) runs in one transaction that locks the row, keeps
 * its previous state as a revision (with the credential and time; only the newest
 * ARTICLE_REVISIONS_KEPT are kept, pruned in the same transaction) and bumps `version`. Handles are
 * unique among a project's live articles (a partial unique index), so races end in a clean clash.
 */
@Injectable()
export class ArticlesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly articles: ArticlesRepository,
    private readonly listing: ArticleListingService,
  ) {}

  list(scope: ProjectScope, q: ListArticlesQuery): Promise<ArticleListing> {
    return this.listing.list(scope, q);
  }

  /** Live articles per project, for the projects given (of one account). */
  async countByProject(accountId: string, projectIds: string[]): Promise<Map<string, number>> {
    const counts = await this.articles.countLive(accountId, projectIds);
    return new Map(projectIds.map((id, i) => [id, counts[i]]));
  }

  async get(scope: ProjectScope, by: { id?: string; handle?: string }): Promise<ArticleView> {
    // An id that is not a UUID names no article, like any other unknown id.
    const article =
      by.id === undefined ? await this.articles.find(scope, { handle: by.handle! }) : isUuid(by.id) ? await this.articles.find(scope, { id: by.id }) : null;
    if (!article) {
      throw by.id !== undefined ? notFound(by.id) : new DomainError('not_found', `No article with handle "${by.handle}" in this project.`);
    }
    return articleView(article);
  }

  /**
   * The earlier states of an article stored as revisions: how many there are and the most kept (the
   * newest ARTICLE_REVISIONS_KEPT; each change deletes the older ones).
   */
  async revisions(scope: ProjectScope, articleId: string): Promise<{ kept: number; limit: number }> {
    return { kept: await this.articles.countRevisions(scope.accountId, articleId), limit: this.articles.revisionsKept };
  }

  /** A live article by id among `projectIds` of the account (the projects a caller may read); null otherwise. */
  async findInProjects(accountId: string, projectIds: string[], id: string): Promise<ArticleView | null> {
    if (!isUuid(id) || projectIds.length === 0) return null;
    const article = await this.articles.findInProjects(accountId, projectIds, id);
    return article ? articleView(article) : null;
  }

  /**
   * A new article. Without a handle one is derived from the title, taking `-2`, `-3`... when taken;
   * an explicit handle that is taken is a `handle_taken` error naming a free one.
   */
  async create(scope: ProjectScope, input: NewArticle): Promise<ArticleView> {
    return articleView(await this.insertArticle(this.db.manager, scope, input));
  }

  /**
   * Creates an article inside the caller's transaction (an AI job commits it with the job's
   * success). A derived handle takes the first free suffix; an article already written by the
   * same job is returned instead of a second one.
   */
  async createInTransaction(manager: EntityManager, scope: ProjectScope, input: NewArticle & { job_id: string }): Promise<ArticleView> {
    const existing = await this.articles.findByJob(scope.accountId, input.job_id, manager);
    if (existing) return articleView(existing);
    return articleView(await this.insertArticle(manager, scope, { source: 'ai', ...input }));
  }

  async update(scope: ProjectScope, id: string, version: number, fields: ArticleFields, actor: Actor): Promise<ArticleView> {
    const changes = checkArticleFields(fields);
    if (Object.values(changes).every((v) => v === undefined)) {
      throw new DomainError('invalid_arguments', 'Nothing to update: give at least one of title, body, handle, excerpt or tags.');
    }
    const set = {
      title: changes.title ?? null,
      body: changes.body ?? null,
      handle: changes.handle ?? null,
      excerpt: changes.excerpt ?? null,
      tags: changes.tags ?? null,
    };
    return this.withHandleClash(scope, changes.handle, () =>
      this.change(
        scope,
        id,
        actor,
        (m) => this.articles.updateFields(scope, id, set, m),
        async (m, before) => {
          if (before.version !== version) {
            throw new DomainError(
              'version_conflict',
              `The article "${id}" is at version ${before.version}, not ${version}: it changed since you read it. Read it again with get_article and retry with version ${before.version}.`,
              { current_version: before.version },
            );
          }
          if (changes.handle !== undefined && changes.handle !== before.handle && (await this.articles.handleHeld(scope, changes.handle, id, m))) {
            throw await this.handleTaken(scope, changes.handle, m);
          }
          return true;
        },
      ),
    );
  }

  /**
   * Publishes now, or schedules for a future `publishedAt` (Postgres' clock decides which). An article
   * already published stays as it is when no time is given.
   */
  async publish(scope: ProjectScope, id: string, publishedAt: Date | undefined, actor: Actor): Promise<ArticleView> {
    return this.change(
      scope,
      id,
      actor,
      (m) => this.articles.publish(scope, id, publishedAt ?? null, m),
      (_m, before) => publishedAt !== undefined || before.status !== 'published',
    );
  }

  /** Moves an article to the trash (restorable by an admin for 30 days); its handle becomes free. */
  async delete(scope: ProjectScope, id: string, actor: Actor): Promise<{ deleted: true; id: string }> {
    await this.change(scope, id, actor, (m) => this.articles.trash(scope, id, actor.credentialId, m));
    return { deleted: true, id };
  }

  /**
   * The most recently updated live articles of a project, for the writer's setup context: title,
   * tags, the start of the body and its stored word count (AI jobs, src/agents). Bounded data: a
   * slice of each body and an integer, however large the bodies.
   */
  contextSample(scope: ProjectScope, limit: number): Promise<ContextSampleRow[]> {
    return this.articles.contextSample(scope, limit);
  }

  /**
   * The project's live article count and its generation, which every write touching a live article
   * bumps in the write's own transaction (the article_counts trigger): what was computed from the
   * project's articles at one generation still holds while the generation is the same, on any instance.
   * Generation null: the project never had an article.
   */
  async contextStamp(scope: ProjectScope): Promise<{ total: number; generation: string | null }> {
    return (await this.articles.contextStamp(scope)) ?? { total: 0, generation: null };
  }

  /**
   * Sets an article's featured image inside the caller's transaction (with the image's insert),
   * keeping the previous state as a revision and bumping the version. Null when the article is gone.
   */
  async setFeaturedImage(
    manager: EntityManager,
    scope: ProjectScope,
    articleId: string,
    mediaId: string,
    credentialId: string | null,
  ): Promise<ArticleView | null> {
    const before = await this.articles.lockLive(scope, articleId, manager);
    if (!before) return null;
    return articleView(await this.revise(manager, scope, before, { credentialId }, (m) => this.articles.setFeaturedImage(scope, articleId, mediaId, m)));
  }

  /** `handle`, or `handle-2`, `handle-3`... whichever is free first among the project's live articles. */
  async freeHandle(scope: ProjectScope, handle: string, manager: EntityManager = this.db.manager): Promise<string> {
    for (let from = 1; from <= HANDLE_SUFFIX_LIMIT; from += HANDLE_BATCH) {
      const candidates = handleCandidates(handle, from, HANDLE_BATCH);
      const taken = await this.articles.takenHandles(scope, candidates, manager);
      const free = candidates.find((c) => !taken.has(c));
      if (free) return free;
    }
    throw new DomainError('conflict', `No free handle is left for "${handle}" in this project; choose another handle.`);
  }

  /**
   * One change of a live article of the scope, in one transaction: locks it, lets `check` refuse the
   * change (throw) or find nothing to do (false), keeps its state as a revision, then writes it.
   */
  private async change(
    scope: ProjectScope,
    id: string,
    actor: Actor,
    write: Write,
    check: (m: EntityManager, before: Article) => boolean | Promise<boolean> = () => true,
  ): Promise<ArticleView> {
    if (!isUuid(id)) throw notFound(id);
    return this.db.transaction(async (m) => {
      const before = await this.articles.lockLive(scope, id, m);
      if (!before) throw notFound(id);
      return articleView((await check(m, before)) ? await this.revise(m, scope, before, actor, write) : before);
    });
  }

  /** Keeps `before` (locked by the caller's transaction) as a revision, then writes the change, which bumps version and updated_at. */
  private async revise(manager: EntityManager, scope: ProjectScope, before: Article, actor: Actor, write: Write): Promise<Article> {
    await this.articles.recordRevisions([before.id], actor.credentialId, scope.accountId, manager);
    return write(manager);
  }

  private async insertArticle(manager: EntityManager, scope: ProjectScope, input: NewArticle): Promise<Article> {
    const fields = checkArticleFields(input);
    const status = fields.status ?? 'draft';
    const publishes = status === 'published' || status === 'scheduled';
    if (fields.published_at != null && !publishes && status !== 'archived') {
      throw new DomainError(
        'invalid_arguments',
        'Invalid value for "published_at": it applies only with status "published" (a future time schedules the article). Set status to "published", or leave published_at out.',
      );
    }
    const insert = (handle: string) =>
      this.articles.insert(
        newId(),
        scope,
        {
          handle,
          title: fields.title,
          excerpt: fields.excerpt ?? '',
          body: fields.body ?? '',
          status,
          published_at: fields.published_at ?? null,
          tags: fields.tags ?? [],
          source: fields.source ?? 'human',
          job_id: fields.job_id ?? null,
          agent_config_version: fields.agent_config_version ?? null,
        },
        manager,
      );

    if (fields.handle !== undefined) {
      const created = await insert(fields.handle);
      if (created) return created;
      throw await this.handleTaken(scope, fields.handle, manager);
    }
    // Probe a batch of candidates, then insert the first free one; a concurrent create may take it first,
    // in which case the insert does nothing and the next candidate is tried.
    const base = handleFromTitle(fields.title);
    for (let from = 1; from <= HANDLE_SUFFIX_LIMIT; from += HANDLE_BATCH) {
      const candidates = handleCandidates(base, from, HANDLE_BATCH);
      const taken = await this.articles.takenHandles(scope, candidates, manager);
      for (const handle of candidates) {
        if (taken.has(handle)) continue;
        const created = await insert(handle);
        if (created) return created;
        if (fields.job_id) {
          const byJob = await this.articles.findByJob(scope.accountId, fields.job_id, manager);
          if (byJob) return byJob;
        }
      }
    }
    throw new DomainError('conflict', `No free handle is left for "${base}" in this project; give an explicit handle.`);
  }

  private async handleTaken(scope: ProjectScope, handle: string, manager?: EntityManager): Promise<DomainError> {
    const free = await this.freeHandle(scope, handle, manager);
    return new DomainError(
      'handle_taken',
      `The handle "${handle}" is already used by another article in this project; "${free}" is free. Retry with handle "${free}", or leave handle out to derive one from the title.`,
      { handle, suggestion: free },
    );
  }

  /** A concurrent writer may take a handle between the check and the write: the unique index decides. */
  private async withHandleClash<T>(scope: ProjectScope, handle: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (handle !== undefined && isHandleClash(err)) throw await this.handleTaken(scope, handle);
      throw err;
    }
  }
}
