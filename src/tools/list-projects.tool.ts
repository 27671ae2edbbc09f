import { Injectable } from '@nestjs/common';
import { ArticlesService } from '../articles/articles.service.js';
import { McpTool, type ToolContext } from '../protocol/mcp-tool.decorator.js';

const input = { type: 'object', properties: {} } as const;

@McpTool({
  name: 'list_projects',
  title: 'List projects',
  description:
    'List the projects this connection reaches, with your role and the number of articles in each. Use an id from here as project_id in the other tools.',
  input,
  output: {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            role: { type: 'string', enum: ['viewer', 'editor', 'owner'] },
            article_count: { type: 'integer' },
          },
          required: ['id', 'name', 'role', 'article_count'],
        },
      },
    },
    required: ['items'],
  },
  scope: 'read',
  role: 'viewer',
  projectScoped: false,
})
@Injectable()
export class ListProjectsTool {
  constructor(private readonly articles: ArticlesService) {}

  async run(_args: unknown, { principal }: ToolContext) {
    // Every reachable project, also one where list_projects itself is disabled: other tools need its id there.
    const projects = [...principal.projects.values()];
    const counts = await this.articles.countByProject(
      principal.accountId,
      projects.map((p) => p.id),
    );
    return { items: projects.map((p) => ({ id: p.id, name: p.name, role: p.role, article_count: counts.get(p.id) ?? 0 })) };
  }
}
