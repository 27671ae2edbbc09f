import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, type DataSource, type EntityManager } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { isUuid, newId } from '../common/ids.js';
import { Article, type ArticleStatus } from './article.entity.js';
import { articleSummary, articleView, type ArticleSummary, type ArticleView } from './article.views.js';
import { handleFromTitle } from './handles.js';

/** Which project of which account an operation acts on; every query filters by both. */
export interface ProjectScope {
  accountId: string;
  projectId: string;
}

export interface ListArticlesQuery {
  page: number;
  page_size: number;
  status?: ArticleStatus;
  search?: string;
  tag?: string;
}

export interface ArticleListing {
  items: ArticleSummary[];
  pagination: { total: number; page: number; page_size: number; pages: number };
}

export interface NewArticle {
  title: string;
  body?: string;
  handle?: string;
  excerpt?: string;
  tags?: string[];
  status?: ArticleStatus;
  published_at?: Date | null;
  source?: 'human' | 'ai';
  job_id?: string | null;
  agent_config_version?: number | null;
}

const UNIQUE_VIOLATION = '23505';

@Injectable()
export class ArticlesService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async list(scope: ProjectScope, q: ListArticlesQuery): Promise<ArticleListing> {
    const params: unknown[] = [scope.accountId, scope.projectId];
    const where = ['account_id = $1', 'project_id = $2', 'deleted_at IS NULL'];
    if (q.status) {
      params.push(q.status);
      where.push(`status = $${params.length}`);
    }
    if (q.search) {
      params.push(`%${q.search.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`);
      where.push(`(lower(title) LIKE $${params.length} OR handle LIKE $${params.length})`);
    }
    if (q.tag) {
      params.push([q.tag]);
      where.push(`tags @> $${params.length}`);
    }
    const filter = where.join(' AND ');
    const [{ total }] = (await this.db.query(`SELECT count(*)::int AS total FROM articles WHERE ${filter}`, params)) as { total: number }[];
    const rows = (await this.db.query(
      `SELECT id, handle, title, excerpt, status, tags, published_at, updated_at, version FROM articles WHERE ${filter}
        ORDER BY updated_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.page_size, (q.page - 1) * q.page_size],
    )) as Article[];
    return {
      items: rows.map(articleSummary),
      pagination: { total, page: q.page, page_size: q.page_size, pages: Math.ceil(total / q.page_size) },
    };
  }

  /** Live articles per project, for the projects given (of one account). */
  async countByProject(accountId: string, projectIds: string[]): Promise<Map<string, number>> {
    const rows = (await this.db.query(
      `SELECT project_id, count(*)::int AS n FROM articles WHERE account_id = $1 AND project_id = ANY($2) AND deleted_at IS NULL GROUP BY project_id`,
      [accountId, projectIds],
    )) as { project_id: string; n: number }[];
    return new Map(rows.map((r) => [r.project_id, r.n]));
  }

  async get(scope: ProjectScope, by: { id?: string; handle?: string }): Promise<ArticleView> {
    // An id that is not a UUID names no article, like any other unknown id.
    const article = by.id !== undefined && !isUuid(by.id) ? null : await this.find(this.db.manager, scope, by);
    if (!article) {
      throw new DomainError('not_found', by.id ? `No article with id "${by.id}" in this project.` : `No article with handle "${by.handle}" in this project.`);
    }
    return articleView(article);
  }

  async create(scope: ProjectScope, input: NewArticle): Promise<ArticleView> {
    const now = new Date();
    const status = input.status ?? 'draft';
    const base: Omit<Article, 'handle'> = {
      id: newId(),
      account_id: scope.accountId,
      project_id: scope.projectId,
      title: input.title,
      excerpt: input.excerpt ?? '',
      body: input.body ?? '',
      status,
      tags: input.tags ?? [],
      published_at: input.published_at ?? (status === 'published' ? now : null),
      created_at: now,
      updated_at: now,
      version: 1,
      featured_image_id: null,
      source: input.source ?? 'human',
      job_id: input.job_id ?? null,
      agent_config_version: input.agent_config_version ?? null,
      deleted_at: null,
      deleted_by: null,
    };
    if (input.handle) {
      try {
        return articleView(await this.insert({ ...base, handle: input.handle }));
      } catch (err) {
        if (isUniqueViolation(err, 'articles_handle_uq')) {
          const free = await this.freeHandle(scope, input.handle);
          throw new DomainError('handle_taken', `The handle "${input.handle}" is already used in this project; "${free}" is free.`, { suggestion: free });
        }
        throw err;
      }
    }
    // A derived handle takes the first free suffix; a concurrent create may take it first, so retry.
    const derived = handleFromTitle(input.title);
    for (let attempt = 0; ; attempt++) {
      const handle = await this.freeHandle(scope, derived);
      try {
        return articleView(await this.insert({ ...base, handle }));
      } catch (err) {
        if (!isUniqueViolation(err, 'articles_handle_uq') || attempt >= 5) throw err;
      }
    }
  }

  /** `handle`, or `handle-2`, `handle-3`... whichever is free first among live articles. */
  async freeHandle(scope: ProjectScope, handle: string): Promise<string> {
    const rows = (await this.db.query(
      `SELECT handle FROM articles WHERE project_id = $1 AND account_id = $2 AND deleted_at IS NULL AND (handle = $3 OR handle ~ ('^' || $4 || '-[0-9]+$'))`,
      [scope.projectId, scope.accountId, handle, handle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')],
    )) as { handle: string }[];
    const taken = new Set(rows.map((r) => r.handle));
    if (!taken.has(handle)) return handle;
    for (let n = 2; ; n++) if (!taken.has(`${handle}-${n}`)) return `${handle}-${n}`;
  }

  async find(manager: EntityManager, scope: ProjectScope, by: { id?: string; handle?: string }): Promise<Article | null> {
    return manager.findOne(Article, {
      where: { account_id: scope.accountId, project_id: scope.projectId, deleted_at: IsNull(), ...(by.id ? { id: by.id } : { handle: by.handle }) },
    });
  }

  /**
   * The most recently updated live articles of a project, for the writer's setup context: title,
   * tags, the start of the body and its word count (AI jobs, src/agents).
   */
  async contextSample(scope: ProjectScope, limit: number): Promise<{ title: string; tags: string[]; body_head: string; word_count: number }[]> {
    return (await this.db.query(
      `SELECT title, tags, left(body, 3000) AS body_head,
              (SELECT count(*)::int FROM regexp_matches(body, '[^[:space:][:punct:]]+', 'g')) AS word_count
         FROM articles WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL
        ORDER BY updated_at DESC, id DESC LIMIT $3`,
      [scope.accountId, scope.projectId, limit],
    )) as { title: string; tags: string[]; body_head: string; word_count: number }[];
  }

  /**
   * Creates an article inside the caller's transaction (an AI job commits it with the job's
   * success). A derived handle takes the first free suffix; an article already written by the
   * same job is returned instead of a second one.
   */
  async createInTransaction(manager: EntityManager, scope: ProjectScope, input: NewArticle & { job_id: string }): Promise<ArticleView> {
    const derived = handleFromTitle(input.title);
    for (let attempt = 0; ; attempt++) {
      const [existing] = (await manager.query(`SELECT * FROM articles WHERE job_id = $1 AND account_id = $2`, [input.job_id, scope.accountId])) as Article[];
      if (existing) return articleView(existing);
      const rows = (await manager.query(`SELECT handle FROM articles WHERE project_id = $1 AND account_id = $2 AND deleted_at IS NULL AND (handle = $3 OR handle ~ ('^' || $4 || '-[0-9]+$'))`, [
        scope.projectId,
        scope.accountId,
        derived,
        derived.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      ])) as { handle: string }[];
      const taken = new Set(rows.map((r) => r.handle));
      let handle = derived;
      for (let n = 2; taken.has(handle); n++) handle = `${derived}-${n}`;
      // ON CONFLICT keeps the transaction usable when a concurrent writer took the handle first.
      const [created] = (await manager.query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, excerpt, body, status, tags, source, job_id, agent_config_version)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT DO NOTHING RETURNING *`,
        [newId(), scope.accountId, scope.projectId, handle, input.title, input.excerpt ?? '', input.body ?? '', input.status ?? 'draft', input.tags ?? [], input.source ?? 'ai', input.job_id, input.agent_config_version ?? null],
      )) as Article[];
      if (created) return articleView(created);
      if (attempt >= 5) throw new Error(`Could not find a free handle for "${derived}".`);
    }
  }

  /**
   * Sets an article's featured image inside the caller's transaction (with the image's insert),
   * keeping the previous state as a revision and bumping the version. Null when the article is gone.
   */
  async setFeaturedImage(manager: EntityManager, scope: ProjectScope, articleId: string, mediaId: string, credentialId: string | null): Promise<ArticleView | null> {
    const [before] = (await manager.query(`SELECT * FROM articles WHERE id = $1 AND account_id = $2 AND project_id = $3 AND deleted_at IS NULL FOR UPDATE`, [
      articleId,
      scope.accountId,
      scope.projectId,
    ])) as Article[];
    if (!before) return null;
    await manager.query(`INSERT INTO article_revisions (id, account_id, article_id, version, snapshot, credential_id) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`, [
      newId(),
      scope.accountId,
      articleId,
      before.version,
      JSON.stringify(articleView(before)),
      credentialId,
    ]);
    const [after] = (await manager.query(
      // A CTE so the driver answers rows (a bare UPDATE answers [rows, count]).
      `WITH u AS (UPDATE articles SET featured_image_id = $4, version = version + 1, updated_at = now() WHERE id = $1 AND account_id = $2 AND project_id = $3 RETURNING *)
       SELECT * FROM u`,
      [articleId, scope.accountId, scope.projectId, mediaId],
    )) as Article[];
    return articleView(after);
  }

  private async insert(article: Article): Promise<Article> {
    await this.db.createQueryBuilder().insert().into(Article).values(article).execute();
    return article;
  }
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e.code ?? e.driverError?.code;
  const name = e.constraint ?? e.driverError?.constraint;
  return code === UNIQUE_VIOLATION && (!constraint || name === constraint);
}
