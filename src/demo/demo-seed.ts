import { Inject, Injectable } from '@nestjs/common';
import { AccountsService } from '../accounts/accounts.service.js';
import { ArticlesService } from '../articles/articles.service.js';
import { CredentialsService } from '../auth/credentials.service.js';
import { SCOPES } from '../common/tool-names.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { ProjectsService } from '../projects/projects.service.js';
import { LoginLinksService } from '../login-links/login-links.service.js';
import { UsersService } from '../users/users.service.js';

const SAMPLES = [
  {
    title: 'Welcome to the Demo blog',
    tags: ['news'],
    status: 'published' as const,
    body: '# Welcome\n\nThis blog is served by Reblog MCP. Ask your AI client to list, read or write articles here.',
  },
  {
    title: 'Writing for people who skim',
    tags: ['writing', 'tips'],
    status: 'published' as const,
    body: 'Lead with the point. Use short paragraphs, descriptive headings and lists.\n\n## Why\n\nMost readers scan before they read.',
  },
  {
    title: 'Five habits of calm engineering teams',
    tags: ['engineering', 'culture'],
    status: 'published' as const,
    body: 'Small changes, written decisions, boring deploys, honest estimates and time to think.',
  },
  {
    title: 'A draft about release notes',
    tags: ['writing'],
    status: 'draft' as const,
    body: 'Release notes are for users: say what changed for them, not what you did.',
  },
  {
    title: 'Notes on caching',
    tags: ['engineering'],
    status: 'draft' as const,
    body: 'Cache what is expensive and rarely changes; give every entry a reason to expire.',
  },
];

/** What the first start made: the demo API key, and a sign-in link for the demo owner. */
export interface DemoTenant {
  key: string;
  owner: { email: string; signInUrl: string; expiresAt: Date };
}

/** The first start on an empty database creates a demo tenant, so a client can connect at once. */
@Injectable()
export class DemoSeed {
  constructor(
    private readonly accounts: AccountsService,
    private readonly projects: ProjectsService,
    private readonly articles: ArticlesService,
    private readonly credentials: CredentialsService,
    private readonly users: UsersService,
    private readonly links: LoginLinksService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Returns the demo API key and the owner's sign-in link, or null when the database already has accounts. */
  async seedIfEmpty(): Promise<DemoTenant | null> {
    if (!(await this.accounts.isEmpty())) return null;
    const email = this.config.demoOwnerEmail;
    // Creating the account makes its owner a person and an owner member.
    const account = await this.accounts.create({ name: 'Demo', owner_email: email });
    const owner = await this.users.findByEmail(email);
    if (!owner) throw new Error(`The demo account's owner ${email} was not made a user.`);
    const project = await this.projects.create(account.id, { name: 'Demo blog' });
    for (const sample of SAMPLES) {
      await this.articles.create({ accountId: account.id, projectId: project.id }, sample);
    }
    const { secret } = await this.credentials.create(account.id, 'api_key', {
      name: 'Demo key',
      scopes: [...SCOPES],
      projects: [{ project_id: project.id, role: 'owner' }],
    });
    const link = await this.links.create(owner.id);
    return { key: secret, owner: { email, signInUrl: link.url, expiresAt: link.expires_at } };
  }
}
