import { Injectable } from '@nestjs/common';
import { AccountsService } from '../accounts/accounts.service.js';
import { ArticlesService } from '../articles/articles.service.js';
import { CredentialsService } from '../auth/credentials.service.js';
import { SCOPES } from '../common/tool-names.js';
import { ProjectsService } from '../projects/projects.service.js';

const SAMPLES = [
  { title: 'Welcome to the Demo blog', tags: ['news'], status: 'published' as const, body: '# Welcome\n\nThis blog is served by Reblog MCP. Ask your AI client to list, read or write articles here.' },
  { title: 'Writing for people who skim', tags: ['writing', 'tips'], status: 'published' as const, body: 'Lead with the point. Use short paragraphs, descriptive headings and lists.\n\n## Why\n\nMost readers scan before they read.' },
  { title: 'Five habits of calm engineering teams', tags: ['engineering', 'culture'], status: 'published' as const, body: 'Small changes, written decisions, boring deploys, honest estimates and time to think.' },
  { title: 'A draft about release notes', tags: ['writing'], status: 'draft' as const, body: 'Release notes are for users: say what changed for them, not what you did.' },
  { title: 'Notes on caching', tags: ['engineering'], status: 'draft' as const, body: 'Cache what is expensive and rarely changes; give every entry a reason to expire.' },
];

/** The first start on an empty database creates a demo tenant, so a client can connect at once. */
@Injectable()
export class DemoSeed {
  constructor(
    private readonly accounts: AccountsService,
    private readonly projects: ProjectsService,
    private readonly articles: ArticlesService,
    private readonly credentials: CredentialsService,
  ) {}

  /** Returns the demo API key, or null when the database already has accounts. */
  async seedIfEmpty(): Promise<{ key: string } | null> {
    if (!(await this.accounts.isEmpty())) return null;
    const account = await this.accounts.create({ name: 'Demo', owner_email: 'owner@demo.test' });
    const project = await this.projects.create(account.id, { name: 'Demo blog' });
    for (const sample of SAMPLES) {
      await this.articles.create({ accountId: account.id, projectId: project.id }, sample);
    }
    const { secret } = await this.credentials.create(account.id, 'api_key', {
      name: 'Demo key',
      scopes: [...SCOPES],
      projects: [{ project_id: project.id, role: 'owner' }],
    });
    return { key: secret };
  }
}
