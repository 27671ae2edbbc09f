import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, type Repository } from 'typeorm';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { TOOL_NAMES } from '../common/tool-names.js';
import { AccountsService } from '../accounts/accounts.service.js';
import { Project } from './project.entity.js';

export interface ProjectView {
  id: string;
  account_id: string;
  name: string;
  disabled_tools: string[];
  created_at: Date;
}

/** Listeners told when a project's settings change, so cached principals can be dropped. */
type ChangeListener = (project: Project) => void;

@Injectable()
export class ProjectsService {
  private readonly listeners: ChangeListener[] = [];

  constructor(
    @InjectRepository(Project) private readonly projects: Repository<Project>,
    private readonly accounts: AccountsService,
  ) {}

  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  async create(accountId: string, input: { name: string; disabled_tools?: string[] }): Promise<ProjectView> {
    await this.accounts.get(accountId);
    const now = new Date();
    const project = await this.projects.save(
      this.projects.create({ id: newId(), account_id: accountId, name: input.name, disabled_tools: checkTools(input.disabled_tools ?? []), created_at: now, updated_at: now }),
    );
    return view(project);
  }

  async list(accountId: string, limit = 50, cursor?: string): Promise<Page<ProjectView>> {
    await this.accounts.get(accountId);
    const after = decodeCursor(cursor);
    const rows = await this.projects.find({
      where: { account_id: accountId, ...(after ? { id: LessThan(after) } : {}) },
      order: { id: 'DESC' },
      take: limit + 1,
    });
    return toPage(rows, limit, view);
  }

  async update(id: string, input: { name?: string; disabled_tools?: string[] }): Promise<ProjectView> {
    const project = await this.projects.findOneBy({ id });
    if (!project) throw DomainError.notFound('project', id);
    if (input.name !== undefined) project.name = input.name;
    if (input.disabled_tools !== undefined) project.disabled_tools = checkTools(input.disabled_tools);
    project.updated_at = new Date();
    await this.projects.save(project);
    for (const listener of this.listeners) listener(project);
    return view(project);
  }

  /** Projects of `accountId` among `ids`, in one query (tenant filter in SQL). */
  async findOwned(accountId: string, ids: string[]): Promise<Project[]> {
    if (!ids.length) return [];
    return this.projects.createQueryBuilder('p').where('p.account_id = :accountId AND p.id = ANY(:ids)', { accountId, ids }).getMany();
  }
}

function checkTools(tools: string[]): string[] {
  const unknown = tools.filter((t) => !(TOOL_NAMES as readonly string[]).includes(t));
  if (unknown.length) {
    throw new DomainError('validation_failed', `Unknown tool name(s) in disabled_tools: ${unknown.join(', ')}. Known tools: ${TOOL_NAMES.join(', ')}.`, { disabled_tools: unknown });
  }
  return [...new Set(tools)];
}

function view(p: Project): ProjectView {
  return { id: p.id, account_id: p.account_id, name: p.name, disabled_tools: p.disabled_tools, created_at: p.created_at };
}
