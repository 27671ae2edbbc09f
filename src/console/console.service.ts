import { Inject, Injectable } from '@nestjs/common';
import type { Outcome } from '../activity/activity-entry.entity.js';
import { ActivityReportsService, type ActivityScope } from '../activity/activity-reports.service.js';
import { ArticlesService } from '../articles/articles.service.js';
import { CredentialsService, type ConnectionView, type CredentialView } from '../auth/credentials.service.js';
import { DomainError } from '../common/domain-error.js';
import { roleAtLeast, ROLES, SCOPES, type ProjectRole, type Scope } from '../common/tool-names.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { JobsService } from '../jobs/jobs.service.js';
import type { Membership, ProjectRoleRow, User } from '../users/user.js';
import { UsersService } from '../users/users.service.js';
import type { BrowserSession } from '../web/browser-sessions.service.js';
import type { Frame } from './console.pages.js';

const DAY_MS = 24 * 3_600_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_KEY_NAME = 200;

/** Where a person stands in one account: their membership and the projects where they have a role. */
export interface ConsoleAccount {
  membership: Membership;
  projects: ProjectRoleRow[];
}

export interface OverviewData extends ConsoleAccount {
  articles: Map<string, number>;
  outcomes: Record<Outcome, number>;
  jobs: { queued: number; running: number };
}

/** A connected app with its use: last request and requests in the last 24 hours. */
export type AppRow = ConnectionView & { last_used_at: Date | null; requests_24h: number };
export type KeyRow = CredentialView & { last_used_at: Date | null };

/** What the API-key form sent, kept to show the form again when it is refused. */
export interface KeyForm {
  name: string;
  scopes: string[];
  projects: { project_id: string; role: string }[];
}

/** The key just made: its secret (shown once) and the paste-ready command. */
export interface CreatedKey {
  key: CredentialView;
  secret: string;
  command: string;
}

/**
 * The owners' console (docs/console.md#who-sees-what): what a signed-in person may see and do in an account. Every
 * id is checked against the person here, once: an account they are not a member of, a grant that is
 * not theirs (a member) and an API key (a member) are `not_found`, exactly as an id that does not
 * exist. Reads and writes go through the domain services, so the rules are theirs.
 */
@Injectable()
export class ConsoleService {
  constructor(
    private readonly users: UsersService,
    private readonly credentials: CredentialsService,
    private readonly activity: ActivityReportsService,
    private readonly articles: ArticlesService,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The accounts the person belongs to. */
  /** What every console page is drawn in: who is signed in, the session's form token, whether they have several accounts. */
  async frame(session: BrowserSession): Promise<Frame> {
    return { email: session.user.email, csrf: session.csrf, several: (await this.accounts(session.user)).length > 1 };
  }

  accounts(user: User): Promise<Membership[]> {
    return this.users.memberships(user.id);
  }

  /** The person's place in the account; not_found when they are not a member (or the id is not an id). */
  async account(user: User, accountId: string): Promise<ConsoleAccount> {
    const membership = UUID.test(accountId) ? (await this.users.memberships(user.id)).find((m) => m.account_id === accountId.toLowerCase()) : undefined;
    if (!membership) throw DomainError.notFound('account', accountId);
    return { membership, projects: await this.users.projectRoles(user.id, membership.account_id) };
  }

  /** As {@link account}, for the pages only owners see: a member gets not_found too. */
  async ownedAccount(user: User, accountId: string): Promise<ConsoleAccount> {
    const place = await this.account(user, accountId);
    if (place.membership.role !== 'owner') throw DomainError.notFound('account', accountId);
    return place;
  }

  /** Whose activity the person sees in the account: an owner the whole account's, a member their own grants' (revoked ones too). */
  async activityScope(user: User, place: ConsoleAccount): Promise<ActivityScope> {
    if (place.membership.role === 'owner') return {};
    return { credentialIds: (await this.credentials.connections(place.membership.account_id, user.id)).map((g) => g.id) };
  }

  /**
   * The overview: projects with role and article count, requests in the last 24 h by outcome (the
   * whole account's for an owner, a member's own grants' for a member), jobs queued and running in
   * the projects they see.
   */
  async overview(user: User, accountId: string): Promise<OverviewData> {
    const place = await this.account(user, accountId);
    const id = place.membership.account_id;
    const projectIds = place.projects.map((p) => p.project_id);
    const { credentialIds } = await this.activityScope(user, place);
    const [articles, outcomes, jobs] = await Promise.all([
      this.articles.countByProject(id, projectIds),
      this.activity.outcomesSince(id, new Date(Date.now() - DAY_MS), credentialIds ? [...credentialIds] : null),
      this.jobs.countActive(id, projectIds),
    ]);
    return { ...place, articles, outcomes, jobs };
  }

  /** Connected apps: every OAuth grant of the account for an owner, a member's own for a member. */
  async apps(user: User, accountId: string): Promise<ConsoleAccount & { apps: AppRow[] }> {
    const place = await this.account(user, accountId);
    const id = place.membership.account_id;
    const grants = await this.credentials.connections(id, place.membership.role === 'owner' ? null : user.id);
    const usage = await this.activity.usage(
      id,
      grants.map((g) => g.id),
      new Date(Date.now() - DAY_MS),
    );
    return { ...place, apps: grants.map((g) => ({ ...g, last_used_at: usage.get(g.id)?.lastUsedAt ?? null, requests_24h: usage.get(g.id)?.requests ?? 0 })) };
  }

  /** Disconnect: revokes the grant (`revoked_reason: "user"`); a member only their own. */
  async disconnect(user: User, accountId: string, grantId: string): Promise<void> {
    const place = await this.account(user, accountId);
    if (!UUID.test(grantId)) throw DomainError.notFound('grant', grantId);
    const owner = place.membership.role === 'owner';
    await this.credentials.revoke('grant', grantId, { accountId: place.membership.account_id, userId: owner ? undefined : user.id, reason: 'user' });
  }

  /** The account's API keys (owners), newest first, with their last use. */
  async keys(user: User, accountId: string): Promise<ConsoleAccount & { keys: KeyRow[] }> {
    const place = await this.ownedAccount(user, accountId);
    const id = place.membership.account_id;
    const page = await this.credentials.list(id, 'api_key', 200);
    const usage = await this.activity.usage(
      id,
      page.items.map((k) => k.id),
      new Date(Date.now() - DAY_MS),
    );
    return { ...place, keys: page.items.map((k) => ({ ...k, last_used_at: usage.get(k.id)?.lastUsedAt ?? null })) };
  }

  /**
   * Makes an API key from the form: a name, scopes, projects each with a role up to the owner's own.
   * Answers the key with its secret, or a sentence saying what to fix (nothing is made then).
   */
  async createKey(user: User, accountId: string, form: Record<string, unknown>): Promise<{ created: CreatedKey } | { problem: string; form: KeyForm }> {
    const place = await this.ownedAccount(user, accountId);
    const parsed = readKeyForm(form);
    // A project id of another account (or none) is not_found, as every foreign id is.
    const foreign = parsed.projects.find((p) => !place.projects.some((m) => m.project_id === p.project_id));
    if (foreign) throw DomainError.notFound('project', foreign.project_id);
    const problem = keyFormProblem(parsed, place.projects);
    if (problem) return { problem, form: parsed };
    const { view, secret } = await this.credentials.create(place.membership.account_id, 'api_key', {
      name: parsed.name,
      scopes: parsed.scopes as Scope[],
      projects: parsed.projects.map((p) => ({ project_id: p.project_id, role: p.role as ProjectRole })),
      createdBy: { id: user.id, email: user.email },
    });
    const command = `claude mcp add --transport http reblog ${this.config.publicUrl.replace(/\/+$/, '')}/mcp --header "Authorization: Bearer ${secret}"`;
    return { created: { key: view, secret, command } };
  }

  /** Revokes one of the account's API keys (owners). */
  async revokeKey(user: User, accountId: string, keyId: string): Promise<void> {
    const place = await this.ownedAccount(user, accountId);
    if (!UUID.test(keyId)) throw DomainError.notFound('API key', keyId);
    await this.credentials.revoke('api_key', keyId, { accountId: place.membership.account_id, reason: 'user' });
  }
}

/** A form field as a list of strings (a repeated field arrives as an array, a single one as a string). */
export function list(value: unknown): string[] {
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === 'string');
}

/** The key form's fields: `name`, `scope` (repeated), `project` (repeated ids), `role_<project id>`. */
export function readKeyForm(form: Record<string, unknown>): KeyForm {
  const name = typeof form.name === 'string' ? form.name.trim() : '';
  const projects = [...new Set(list(form.project))].map((id) => ({
    project_id: id,
    role: typeof form[`role_${id}`] === 'string' ? (form[`role_${id}`] as string) : 'viewer',
  }));
  return { name, scopes: [...new Set(list(form.scope))], projects };
}

/** What is wrong with a key form, in a sentence, or null. Roles never above the owner's own on the project. */
export function keyFormProblem(form: KeyForm, mine: ProjectRoleRow[]): string | null {
  if (!form.name) return 'Give the key a name, so you know later what it is for.';
  if (form.name.length > MAX_KEY_NAME) return `The name is longer than ${MAX_KEY_NAME} characters.`;
  if (!form.scopes.length) return 'Choose at least one scope.';
  if (form.scopes.some((s) => !(SCOPES as readonly string[]).includes(s))) return `Scopes are ${SCOPES.join(', ')}.`;
  if (!form.projects.length) return 'Choose at least one project.';
  for (const p of form.projects) {
    const own = mine.find((m) => m.project_id === p.project_id);
    if (!own) return 'One of the chosen projects is not one of yours.';
    if (!(ROLES as readonly string[]).includes(p.role) || !roleAtLeast(own.role, p.role as ProjectRole))
      return `The role on ${own.name} can be at most ${own.role}.`;
  }
  return null;
}
