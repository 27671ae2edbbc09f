import { Injectable } from '@nestjs/common';
import { AgentsService, type AgentConfigVersion } from '../agents/agents.service.js';
import { WRITER_QUESTIONS, type WriterAnswers } from '../agents/writer-questions.js';
import { DomainError } from '../common/domain-error.js';
import { TOOL_NAMES } from '../common/tool-names.js';
import type { Project } from '../projects/project.entity.js';
import type { ProjectScope } from '../projects/project-scope.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { User } from '../users/user.js';
import { ConsoleService, list, type ConsoleAccount } from './console.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Versions of the writer's config the page lists (newest first); older ones stay stored. */
export const VERSIONS_SHOWN = 50;

/** A project of an account the person owns, and the scope its statements run in. */
export interface OwnedProject extends ConsoleAccount {
  project: Project;
  scope: ProjectScope;
}

/** What the settings page shows: the project, its writer config's versions and the answers in the form. */
export interface SettingsData extends OwnedProject {
  /** Newest first; empty when the writer was never configured. */
  versions: AgentConfigVersion[];
  /** The answers the writer form starts from: the latest version's, else those proposed from the project's articles. */
  answers: WriterAnswers;
}

/** The outcome of saving the writer form. */
export type WriterOutcome = { saved: number } | { unchanged: true } | { problem: string; answers: WriterAnswers };

/**
 * Project settings in the console (owners only, docs/console.md#project-settings): the tools disabled in a project
 * and the writer agent's config with its versions. The project is checked against the person once,
 * here (an account they do not own, a project of another account or none: not_found); reads and
 * writes are the admin API's and the MCP tools' own service calls, so their rules and their
 * invalidation (ProjectsService tells every instance's principal cache) are reused.
 */
@Injectable()
export class ConsoleSettingsService {
  constructor(
    private readonly console: ConsoleService,
    private readonly projects: ProjectsService,
    private readonly agents: AgentsService,
  ) {}

  /** The project, when the person owns its account; not_found otherwise (or when the id is not an id). */
  async ownedProject(user: User, accountId: string, projectId: string): Promise<OwnedProject> {
    const place = await this.console.ownedAccount(user, accountId);
    const accountIdFound = place.membership.account_id;
    const [project] = UUID.test(projectId) ? await this.projects.findOwned(accountIdFound, [projectId.toLowerCase()]) : [];
    if (!project) throw DomainError.notFound('project', projectId);
    return { ...place, project, scope: { accountId: accountIdFound, projectId: project.id } };
  }

  /** The page: tools, the writer's answers (or proposals when it has none yet) and its versions. */
  async settings(user: User, accountId: string, projectId: string): Promise<SettingsData> {
    const owned = await this.ownedProject(user, accountId, projectId);
    const versions = await this.agents.versions(owned.scope, 'writer', VERSIONS_SHOWN);
    return { ...owned, versions, answers: versions[0]?.answers ?? (await this.proposed(owned)) };
  }

  /**
   * Sets which of the listed tools are disabled: `listed` are the tools the form showed, `enabled`
   * those left ticked. A tool the form did not show keeps its state (a page older than the catalogue).
   */
  async setTools(user: User, accountId: string, projectId: string, form: Record<string, unknown>): Promise<void> {
    const { project } = await this.ownedProject(user, accountId, projectId);
    const listed = new Set(list(form.tool));
    const enabled = new Set(list(form.enabled));
    const disabled = [...project.disabled_tools.filter((t) => !listed.has(t)), ...TOOL_NAMES.filter((t) => listed.has(t) && !enabled.has(t))];
    await this.projects.update(project.id, { disabled_tools: disabled });
  }

  /**
   * Saves the writer form as a new version of the config (AgentsService.configure: its checks, its
   * consecutive versions). Answers equal to the latest version's make no version.
   */
  async saveWriter(user: User, accountId: string, projectId: string, form: Record<string, unknown>): Promise<WriterOutcome> {
    const owned = await this.ownedProject(user, accountId, projectId);
    const answers: WriterAnswers = {};
    for (const q of WRITER_QUESTIONS) answers[q.id] = typeof form[q.id] === 'string' ? (form[q.id] as string).trim() : '';
    const { config } = await this.agents.get(owned.scope, 'writer');
    if (config && WRITER_QUESTIONS.every((q) => (config.answers[q.id] ?? '') === answers[q.id])) return { unchanged: true };
    try {
      const saved = await this.agents.configure(owned.scope, 'writer', answers, null);
      return { saved: saved.config!.version };
    } catch (err) {
      if (err instanceof DomainError && err.code === 'invalid_arguments') return { problem: err.message, answers };
      throw err;
    }
  }

  private async proposed(owned: OwnedProject): Promise<WriterAnswers> {
    const setup = await this.agents.setupRequired(owned.scope, owned.project);
    return Object.fromEntries(setup.questions.map((q) => [q.id, q.proposed_answer ?? ''])) as WriterAnswers;
  }
}
