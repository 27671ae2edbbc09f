import type { ArticleView } from '../articles/article.views.js';
import type { Principal, ReachableProject } from '../auth/principal.js';
import { RpcError } from '../protocol/json-rpc.js';
import { listsProjectId } from '../protocol/tool-access.js';
import { ARTICLE_MIME_TYPE, articleMarkdown, articleUri } from '../resources/resource-uris.js';
import type { PromptMessage } from './mcp-prompt.decorator.js';

/** Projects named in a prompt's text before it says "see list_projects" instead. */
const PROJECTS_NAMED = 20;

/** An article argument that names nothing readable: the same error for unknown, foreign, unreachable or malformed ids. */
export function unknownArticle(argument: string, id: string): RpcError {
  return RpcError.invalidParams(
    `Invalid value for "${argument}": no article "${id}" among the projects this credential can read. Find ids with list_articles.`,
  );
}

/** A project argument that names nothing usable: the same error whatever the reason. */
export function unknownProject(argument: string, id: string): RpcError {
  return RpcError.invalidParams(`Invalid value for "${argument}": unknown project "${id}" for this credential; see list_projects.`);
}

/** The article as an embedded resource (its stable by-id URI, markdown with its metadata). */
export function articleResource(article: ArticleView): PromptMessage {
  return {
    role: 'user',
    content: { type: 'resource', resource: { uri: articleUri(article.project_id, article.id), mimeType: ARTICLE_MIME_TYPE, text: articleMarkdown(article) } },
  };
}

export function textMessage(text: string): PromptMessage {
  return { role: 'user', content: { type: 'text', text } };
}

/**
 * `project_id "<id>", ` to put before a tool's other arguments in a prompt's text, when the caller's
 * catalogue lists that argument (several reachable projects); nothing when the project is inferred.
 */
export function projectArgument(principal: Principal, projectId: string): string {
  return listsProjectId(principal) ? `project_id "${projectId}", ` : '';
}

export function projectLabel(project: Pick<ReachableProject, 'id' | 'name'>): string {
  return `"${project.name}" (project_id ${project.id})`;
}

export function projectList(projects: readonly ReachableProject[]): string {
  const named = projects.slice(0, PROJECTS_NAMED).map(projectLabel).join(', ');
  return projects.length > PROJECTS_NAMED ? `${named} and ${projects.length - PROJECTS_NAMED} more (see list_projects)` : named;
}
