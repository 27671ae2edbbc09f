import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { TOOL_NAMES } from '../common/tool-names.js';
import { AccountsService } from '../accounts/accounts.service.js';
import { DatabaseNotifications } from '../database/notifications.service.js';
import type { Project } from './project.entity.js';
import { ProjectsRepository } from './projects.repository.js';

export interface ProjectView {
  id: string;
  account_id: string;
  name: string;
  disabled_tools: string[];
  created_at: Date;
}

@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly accounts: AccountsService,
    private readonly notifications: DatabaseNotifications,
    private readonly audit: AuditService,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  async create(accountId: string, input: { name: string; disabled_tools?: string[] }): Promise<ProjectView> {
    await this.accounts.get(accountId);
    const disabledTools = checkTools(input.disabled_tools ?? []);
    return this.db.transaction(async (tx) => {
      const project = view(await this.projects.insert(newId(), accountId, input.name, disabledTools, tx));
      await this.audit.record(tx, {
        action: 'project.created',
        accountId,
        target: { project_id: project.id },
        change: { after: { name: project.name, disabled_tools: project.disabled_tools } },
      });
      return project;
    });
  }

  async list(accountId: string, limit = 50, cursor?: string): Promise<Page<ProjectView>> {
    await this.accounts.get(accountId);
    const after = decodeCursor(cursor);
    return toPage(await this.projects.list(accountId, limit + 1, after), limit, view);
  }

  /** A project, whichever its account; not_found when there is none. */
  async get(id: string): Promise<ProjectView> {
    const project = await this.projects.find(id);
    if (!project) throw DomainError.notFound('project', id);
    return view(project);
  }

  /**
   * Renames a project or changes its disabled tools. What principals reaching it may do changes on
   * every instance at its next request: the projects table's trigger tells every instance when the
   * change commits, and this one answers once it heard.
   */
  async update(id: string, input: { name?: string; disabled_tools?: string[] }): Promise<ProjectView> {
    await this.get(id);
    const disabledTools = input.disabled_tools === undefined ? null : checkTools(input.disabled_tools);
    const project = await this.db.transaction(async (tx) => {
      const before = await this.projects.find(id, tx, true);
      const after = before && (await this.projects.update(id, { name: input.name ?? null, disabled_tools: disabledTools }, tx));
      if (!before || !after) throw DomainError.notFound('project', id);
      await this.audit.record(tx, {
        action: 'project.updated',
        accountId: after.account_id,
        target: { project_id: id },
        change: { before: { name: before.name, disabled_tools: before.disabled_tools }, after: { name: after.name, disabled_tools: after.disabled_tools } },
      });
      return after;
    });
    await this.notifications.caughtUp();
    return view(project);
  }

  /** Projects of `accountId` among `ids`, in one query (tenant filter in SQL). */
  async findOwned(accountId: string, ids: string[]): Promise<Project[]> {
    if (!ids.length) return [];
    return this.projects.findOwned(accountId, ids);
  }
}

function checkTools(tools: string[]): string[] {
  const unknown = tools.filter((t) => !(TOOL_NAMES as readonly string[]).includes(t));
  if (unknown.length) {
    throw new DomainError('validation_failed', `Unknown tool name(s) in disabled_tools: ${unknown.join(', ')}. Known tools: ${TOOL_NAMES.join(', ')}.`, {
      disabled_tools: unknown,
    });
  }
  return [...new Set(tools)];
}

function view(p: Project): ProjectView {
  return { id: p.id, account_id: p.account_id, name: p.name, disabled_tools: p.disabled_tools, created_at: p.created_at };
}
