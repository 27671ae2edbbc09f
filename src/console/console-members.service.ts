import { Inject, Injectable } from '@nestjs/common';
import { isPersonEmail } from '../users/email.js';
import { DomainError } from '../common/domain-error.js';
import { isUuid } from '../common/ids.js';
import { ROLES, type ProjectRole } from '../common/tool-names.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { LoginLinksService, type LoginLinkView } from '../login-links/login-links.service.js';
import { MembershipsService } from '../people/memberships.service.js';
import { PeopleService } from '../people/people.service.js';
import type { AccountRole, ProjectRoleRow, User } from '../users/user.js';
import { UsersService } from '../users/users.service.js';
import { ConsoleService, type ConsoleAccount } from './console.service.js';
import { accountPath } from './console.pages.js';

const ACCOUNT_ROLES: readonly AccountRole[] = ['owner', 'member'];
/** Members listed on one page. */
export const MEMBERS_PAGE = 100;

/** A member of the account with their effective role on each project. */
export interface MemberRow {
  user_id: string;
  email: string;
  role: AccountRole;
  projects: ProjectRoleRow[];
}

export interface MembersData extends ConsoleAccount {
  members: MemberRow[];
  next_cursor: string | null;
  /** Sign-in links can be made (`link` is one of LOGIN_METHODS). */
  links: boolean;
}

export interface MemberData extends ConsoleAccount {
  member: MemberRow;
  links: boolean;
  /**
   * Why the signed-in owner may not make this person a sign-in link (they belong to other accounts): the
   * sentence shown in place of the button; null when a link can be made, or links are off.
   */
  linkRefusal: string | null;
  /** The signed-in owner is looking at themselves. */
  self: boolean;
}

/** What a member form sent: an account role and, for a member, a role (or none) per project of the account. */
export interface MemberForm {
  email: string;
  role: string;
  /** Project id → role; a project left out (or "none") gets no role. */
  projects: Map<string, string>;
}

/** A form the services refused, with the sentence to show and the HTTP status of the page. */
export interface Refused {
  problem: string;
  status: number;
  form?: MemberForm;
}

/** What happened to the signed-in owner: they may have left the account or stopped owning it. */
export type Changed = { changed: 'member' | 'self_demoted' | 'self_removed' };

/**
 * The console's Members page (docs/console.md#members, owners only): the people of an account with their
 * roles, added by email (the user is made when new), their roles changed, removed, and a sign-in link
 * made for them. Every write goes through PeopleService and MembershipsService, so the rules (the
 * last owner, project roles only for members) and the reach of a change (every instance's cached
 * principals dropped: an OAuth grant follows its person at its next request) are theirs.
 */
@Injectable()
export class ConsoleMembersService {
  constructor(
    private readonly console: ConsoleService,
    private readonly users: UsersService,
    private readonly people: PeopleService,
    private readonly memberships: MembershipsService,
    private readonly links: LoginLinksService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The account's members, newest membership first, a page at a time. */
  async members(user: User, accountId: string, cursor?: unknown): Promise<MembersData> {
    const place = await this.console.ownedAccount(user, accountId);
    const id = place.membership.account_id;
    let page;
    try {
      page = await this.memberships.listAccountMembers(id, MEMBERS_PAGE, typeof cursor === 'string' ? cursor : undefined);
    } catch (err) {
      // A cursor this page did not make: the same 404 as any id that is not there.
      if (err instanceof DomainError && err.code === 'validation_failed') throw DomainError.notFound('members page', String(cursor));
      throw err;
    }
    const members = await Promise.all(
      page.items.map(async (m) => ({ user_id: m.user_id, email: m.email, role: m.role, projects: await this.users.projectRoles(m.user_id, id) })),
    );
    return { ...place, members, next_cursor: page.next_cursor, links: this.linksOn };
  }

  /** One member of the account (not_found for anyone else, as for an id that does not exist). */
  async member(user: User, accountId: string, userId: string): Promise<MemberData> {
    const place = await this.console.ownedAccount(user, accountId);
    const member = await this.memberOf(place, userId);
    const linkRefusal = this.linksOn
      ? await this.links.outreach({ id: member.user_id, email: member.email }, { accountId: place.membership.account_id, userId: user.id })
      : null;
    return { ...place, member, links: this.linksOn, linkRefusal, self: userId.toLowerCase() === user.id };
  }

  /**
   * Adds a person by email with an account role and, for a member, project roles; the user is made
   * when nobody has the email yet. A person already in the account is refused (their roles are
   * changed on their own page, not by adding them again).
   */
  async add(user: User, accountId: string, body: Record<string, unknown>): Promise<{ added: string } | Refused> {
    const place = await this.console.ownedAccount(user, accountId);
    const id = place.membership.account_id;
    const form = readMemberForm(body, place);
    const problem = emailProblem(form.email) ?? rolesProblem(form);
    if (problem) return { problem, status: 400, form };
    const existing = await this.users.findByEmail(form.email);
    if (existing && (await this.users.memberships(existing.id)).some((m) => m.account_id === id)) {
      return { problem: `${existing.email} is a member of this account already: change their roles on their own page.`, status: 409, form };
    }
    const person = existing ?? (await this.people.findOrCreate(form.email));
    await this.memberships.putAccountMember(id, person.id, form.role as AccountRole);
    if (form.role === 'member') await this.applyProjectRoles(place, person.id, form.projects, null);
    return { added: person.email };
  }

  /**
   * Changes a member's account role and, for a member, their project roles. Refused when it would
   * leave the account without an owner: the service's 409 sentence, and nothing changed.
   */
  async changeRoles(user: User, accountId: string, userId: string, body: Record<string, unknown>): Promise<Changed | Refused> {
    const place = await this.console.ownedAccount(user, accountId);
    const id = place.membership.account_id;
    const member = await this.memberOf(place, userId);
    const form = readMemberForm(body, place);
    const problem = rolesProblem(form);
    if (problem) return { problem, status: 400, form };
    if (form.role !== member.role) {
      const refused = await conflictSentence(() => this.memberships.putAccountMember(id, member.user_id, form.role as AccountRole));
      if (refused) return { problem: refused, status: 409, form };
    }
    // An owner has the owner role on every project: their project roles matter once they are a member.
    if (form.role === 'member') await this.applyProjectRoles(place, member.user_id, form.projects, member.role === 'member' ? member.projects : null);
    const self = member.user_id === user.id;
    return { changed: self && form.role !== 'owner' ? 'self_demoted' : 'member' };
  }

  /** Removes a person from the account (and its projects); never its last owner (the 409's sentence). */
  async remove(user: User, accountId: string, userId: string): Promise<Changed | Refused> {
    const place = await this.console.ownedAccount(user, accountId);
    const member = await this.memberOf(place, userId);
    const refused = await conflictSentence(() => this.memberships.deleteAccountMember(place.membership.account_id, member.user_id));
    if (refused) return { problem: refused, status: 409 };
    return { changed: member.user_id === user.id ? 'self_removed' : 'member' };
  }

  /**
   * A single-use sign-in link for a member, to hand over yourself; only where `link` sign-in is on
   * (else not_found, as a page that is not there). It comes back to this account after signing in.
   * A link signs in the person everywhere they belong, so it is made only for a person whose every
   * account the signed-in owner owns (else the 422 sentence: they sign in themselves); it names this
   * account and the owner who made it.
   */
  async signInLink(user: User, accountId: string, userId: string): Promise<{ link: LoginLinkView; member: MemberData } | (Refused & { member: MemberData })> {
    if (!this.linksOn) throw DomainError.notFound('sign-in link', userId);
    const member = await this.member(user, accountId, userId);
    try {
      const madeBy = { accountId: member.membership.account_id, userId: user.id };
      return { link: await this.links.create(member.member.user_id, { return_to: accountPath(member.membership.account_id), madeBy }), member };
    } catch (err) {
      // A disabled person, or one who belongs to other accounts, gets no link: the service says why.
      if (err instanceof DomainError && err.code === 'unprocessable') return { problem: err.message, status: 422, member };
      throw err;
    }
  }

  private get linksOn(): boolean {
    return this.config.loginMethods.includes('link');
  }

  private async memberOf(place: ConsoleAccount, userId: string): Promise<MemberRow> {
    const id = place.membership.account_id;
    const person = isUuid(userId)
      ? await this.users.get(userId.toLowerCase()).catch((err: unknown) => {
          if (err instanceof DomainError && err.code === 'not_found') return null;
          throw err;
        })
      : null;
    const membership = person ? (await this.users.memberships(person.id)).find((m) => m.account_id === id) : undefined;
    if (!person || !membership) throw DomainError.notFound('member', userId);
    return { user_id: person.id, email: person.email, role: membership.role, projects: await this.users.projectRoles(person.id, id) };
  }

  /**
   * Sets the person's role on each project of the account as the form says: a role is put, no role
   * removes theirs. `current` (their roles now, when known) skips what does not change.
   */
  private async applyProjectRoles(place: ConsoleAccount, userId: string, wanted: Map<string, string>, current: ProjectRoleRow[] | null): Promise<void> {
    for (const project of place.projects) {
      const role = wanted.get(project.project_id);
      const now = current?.find((p) => p.project_id === project.project_id)?.role;
      if (current && role === now) continue;
      if (role) {
        await this.memberships.putProjectMember(project.project_id, userId, role as ProjectRole);
      } else if (!current || now) {
        // No role wanted: remove theirs, when they have one (unknown for a former owner: try).
        await this.memberships.deleteProjectMember(project.project_id, userId).catch((err: unknown) => {
          if (!(err instanceof DomainError && err.code === 'not_found')) throw err;
        });
      }
    }
  }
}

/** Runs a membership change; answers the service's sentence when it refuses it as a conflict (the last owner), else null. */
async function conflictSentence(change: () => Promise<unknown>): Promise<string | null> {
  try {
    await change();
    return null;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'conflict') return err.message;
    throw err;
  }
}

/** A form field as one string (the first when repeated). */
function text(value: unknown): string {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first.trim() : '';
}

/**
 * The member form: `email` (when adding), `role` (owner or member), `project_role_<project id>`
 * (viewer, editor, owner, or empty for none). A project id that is not the account's is not_found,
 * as every foreign id is.
 */
export function readMemberForm(body: Record<string, unknown>, place: ConsoleAccount): MemberForm {
  const projects = new Map<string, string>();
  for (const [key, value] of Object.entries(body)) {
    if (!key.startsWith('project_role_')) continue;
    const projectId = key.slice('project_role_'.length).toLowerCase();
    if (!place.projects.some((p) => p.project_id === projectId)) throw DomainError.notFound('project', projectId);
    const role = text(value);
    if (role && role !== 'none') projects.set(projectId, role);
  }
  return { email: text(body.email), role: text(body.role), projects };
}

/** What is wrong with the email, in a sentence, or null: the admin API's own rule (isPersonEmail). */
export function emailProblem(email: string): string | null {
  if (!email) return 'Give the email address of the person to add.';
  return isPersonEmail(email) ? null : `“${email}” is not an email address.`;
}

/** What is wrong with the roles, in a sentence, or null. */
export function rolesProblem(form: MemberForm): string | null {
  if (!(ACCOUNT_ROLES as readonly string[]).includes(form.role)) return 'Choose the account role: owner or member.';
  for (const role of form.projects.values()) if (!(ROLES as readonly string[]).includes(role)) return `A project role is one of ${ROLES.join(', ')}, or none.`;
  return null;
}
