import { Injectable } from '@nestjs/common';
import type { ArticleView } from '../articles/article.views.js';
import { ArticlesService } from '../articles/articles.service.js';
import type { Principal, ReachableProject } from '../auth/principal.js';
import { ToolAccess } from '../protocol/tool-access.js';

/**
 * The tenancy rule of prompts and completions (as of resources): a project's articles are readable
 * exactly where the credential could run `get_article` there — scope `read`, project reachable, role
 * high enough, `get_article` not disabled. Anything else behaves as if it did not exist.
 */
@Injectable()
export class ReadableArticles {
  constructor(
    private readonly access: ToolAccess,
    private readonly articles: ArticlesService,
  ) {}

  /** Projects whose articles `principal` may read (reachable order). */
  projects(principal: Principal): ReachableProject[] {
    return this.allowedProjects(principal, 'get_article');
  }

  /** Projects where `principal` may run `toolName`; none when the tool is not in its catalogue. */
  allowedProjects(principal: Principal, toolName: string): ReachableProject[] {
    const tool = this.access.find(principal, toolName);
    return tool ? this.access.allowedProjects(principal, tool.definition) : [];
  }

  /** A live article by id in one of the readable projects (of `among`, when given); null otherwise. */
  byId(principal: Principal, id: string, among?: readonly ReachableProject[]): Promise<ArticleView | null> {
    const readable = this.projects(principal).filter((p) => !among || among.some((a) => a.id === p.id));
    return this.articles.findInProjects(
      principal.accountId,
      readable.map((p) => p.id),
      id,
    );
  }
}
