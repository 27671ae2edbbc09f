import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { ProjectScope } from '../projects/project-scope.js';
import { ArticleListingRepository, type Anchor, type ListingPage } from './article-listing.repository.js';
import type { ArticleStatus } from './article.entity.js';
import { articleSummary, type ArticleSummary, type ArticleSummaryRow } from './article.views.js';

export interface ListArticlesQuery {
  page: number;
  page_size: number;
  status?: ArticleStatus;
  search?: string;
  tag?: string;
}

export interface ArticleListing {
  items: ArticleSummary[];
  /** `total_capped`: a search or tag filter matched more than SEARCH_TOTAL_CAP articles, and `total` is that cap. */
  pagination: { total: number; page: number; page_size: number; pages: number; total_capped?: true };
}

/** Every ANCHOR_EVERY-th row of a listing is remembered, so a deep page seeks to it instead of skipping rows. */
export const ANCHOR_EVERY = 256;
const MAX_ANCHOR_SETS = 1_000;
/** Search and tag totals are exact up to this many matches; beyond, the total says this and `total_capped`. */
export const SEARCH_TOTAL_CAP = 10_000;
/** Up to this offset a page reads its rows directly; beyond, ids first (deferred join). */
const DIRECT_MAX_OFFSET = 64;
/** A refresh of one listing's anchors costs one pass over its index: at most one a second, and ≤ 5% of the time. */
const REFRESH_MIN_INTERVAL_MS = 1_000;
const REFRESH_MAX_SHARE = 0.05;

/** Keyset positions of one listing (a project, optionally one status), valid for one generation of the project. */
interface AnchorSet {
  generation: string;
  /** anchors[j] is the row at position (j + 1) × ANCHOR_EVERY (0-based) in listing order. */
  anchors: Anchor[];
}

/** A listing page kept for its generation of the project. */
interface KeptPage {
  generation: string;
  /** Frozen: served as it is to every call that finds the generation unchanged. */
  listing: ArticleListing;
}

interface Refresh {
  startedAt: number;
  tookMs: number;
  running?: Promise<void>;
}

interface Page {
  rows: ArticleSummaryRow[];
  total: number;
  /** The total is SEARCH_TOTAL_CAP and there are more matches. */
  capped?: boolean;
}

/**
 * `list_articles` at scale:
 * - the total comes from `article_counts` (kept by a trigger in the writes' transactions), read in the same
 *   prepared statement as the page, never by counting the project (article-listing.repository.ts);
 * - a near page reads its rows directly on the listing index; a far one is a deferred join: its ids come
 *   from the covering index `(project_id[, status], updated_at, id)` (index-only), then only its rows are read;
 * - a deep page starts from the nearest remembered keyset anchor (`(updated_at, id) <= anchor`), so page 4000
 *   skips at most ANCHOR_EVERY index entries instead of 80,000. Anchors belong to one generation of the
 *   project (bumped by every write, by the same trigger); the statement returns the generation it saw, and a
 *   page read with anchors of another generation is read again without them;
 * - search and tag filters use the trigram and tag GIN indexes (or the listing index, for common matches);
 *   their totals are counted, up to SEARCH_TOTAL_CAP;
 * - a page without search or tag is kept (the LISTING_CACHE_PAGES most recently used) with the generation it
 *   was read at; the next call for it reads the generation and total alone (one row of `article_counts`) and,
 *   the generation unchanged, answers the kept page: no write touched the project's live articles since, on
 *   any instance. The kept listing is frozen, so its JSON is made once (tool-result.ts).
 */
@Injectable()
export class ArticleListingService {
  private readonly log = new Logger(ArticleListingService.name);
  private readonly anchorSets = new Map<string, AnchorSet>();
  private readonly refreshes = new Map<string, Refresh>();
  /** Kept pages by account, project, status, page and page size; in order of use, the least recent first. */
  private readonly kept = new Map<string, KeptPage>();
  private readonly maxKept: number;

  constructor(
    private readonly listing: ArticleListingRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxKept = config.listingCachePages;
  }

  async list(scope: ProjectScope, q: ListArticlesQuery): Promise<ArticleListing> {
    const offset = (q.page - 1) * q.page_size;
    if (q.search !== undefined || q.tag !== undefined) return listingOf(await this.filtered(scope, q, offset), q);
    const key = `${scope.accountId}|${scope.projectId}|${q.status ?? '*'}|${q.page}|${q.page_size}`;
    const kept = this.kept.get(key);
    if (kept && (await this.listing.counts(scope, q.status)).generation === kept.generation) {
      this.keep(key, kept);
      return kept.listing;
    }
    const page = await this.byStatus(scope, q, offset);
    const listing = listingOf(page, q);
    if (page.generation === null || this.maxKept === 0) return listing;
    for (const item of listing.items) Object.freeze(Object.freeze(item).tags);
    Object.freeze(listing.items);
    Object.freeze(listing.pagination);
    this.keep(key, { generation: page.generation, listing: Object.freeze(listing) });
    return listing;
  }

  /** Keeps a page as the most recently used, forgetting the least recently used beyond the bound. */
  private keep(key: string, page: KeptPage): void {
    this.kept.delete(key);
    if (this.kept.size >= this.maxKept) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, page);
  }

  private async byStatus(scope: ProjectScope, q: ListArticlesQuery, offset: number): Promise<ListingPage> {
    const key = `${scope.projectId}|${q.status ?? '*'}`;
    const set = offset >= ANCHOR_EVERY ? this.anchorSets.get(key) : undefined;
    if (set && set.anchors.length) {
      const j = Math.min(Math.floor(offset / ANCHOR_EVERY), set.anchors.length) - 1;
      const page = await this.page(scope, q, offset - (j + 1) * ANCHOR_EVERY, set.anchors[j]);
      if (page.generation === set.generation) return page;
    }
    const page = await this.page(scope, q, offset);
    if (offset >= ANCHOR_EVERY && page.generation) this.refreshAnchors(key, scope, q.status);
    return page;
  }

  /** A near page reads its rows directly; a far one first finds its ids (a deferred join). */
  private page(scope: ProjectScope, q: ListArticlesQuery, offset: number, anchor?: Anchor): Promise<ListingPage> {
    return this.listing.page(scope, q.status, q.page_size, offset, offset > DIRECT_MAX_OFFSET, anchor);
  }

  /**
   * Search and tag: the page and a bounded count run side by side. The page lets the planner choose between
   * the GIN indexes (rare matches) and walking the listing index until the page is full (common ones); the
   * count stops after SEARCH_TOTAL_CAP matches, so no search costs more than that many rows to count.
   */
  private async filtered(scope: ProjectScope, q: ListArticlesQuery, offset: number): Promise<Page> {
    // LIKE-escaped and lower-case, as the statements compare it (see the trigram indexes).
    const like = q.search === undefined ? undefined : `%${q.search.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    const { rows, counted } = await this.listing.filtered(scope, { status: q.status, like, tag: q.tag }, q.page_size, offset, SEARCH_TOTAL_CAP + 1);
    return { rows, total: Math.min(counted, SEARCH_TOTAL_CAP), capped: counted > SEARCH_TOTAL_CAP };
  }

  /** Recomputes a listing's anchors in the background, in one statement (one snapshot with its generation). */
  private refreshAnchors(key: string, scope: ProjectScope, status: ArticleStatus | undefined): void {
    const now = Date.now();
    const last = this.refreshes.get(key);
    if (last && (last.running || now - last.startedAt < Math.max(REFRESH_MIN_INTERVAL_MS, last.tookMs / REFRESH_MAX_SHARE))) return;
    const refresh: Refresh = { startedAt: now, tookMs: 0 };
    refresh.running = (async () => {
      const { generation, anchors } = await this.listing.anchors(scope, status, ANCHOR_EVERY);
      if (!generation) return;
      this.anchorSets.delete(key);
      if (this.anchorSets.size >= MAX_ANCHOR_SETS) this.anchorSets.delete(this.anchorSets.keys().next().value!);
      this.anchorSets.set(key, { generation, anchors });
    })()
      .catch((err: Error) => this.log.warn(`Could not refresh the listing anchors of ${key}: ${err.message}`))
      .finally(() => {
        refresh.tookMs = Date.now() - refresh.startedAt;
        refresh.running = undefined;
      });
    this.refreshes.delete(key);
    if (this.refreshes.size >= MAX_ANCHOR_SETS) this.refreshes.delete(this.refreshes.keys().next().value!);
    this.refreshes.set(key, refresh);
  }
}

/** The answer of `list_articles`: the page's articles and its pagination. */
function listingOf({ rows, total, capped }: Page, q: ListArticlesQuery): ArticleListing {
  return {
    items: rows.map(articleSummary),
    pagination: { total, page: q.page, page_size: q.page_size, pages: Math.ceil(total / q.page_size), ...(capped ? { total_capped: true } : {}) },
  };
}
