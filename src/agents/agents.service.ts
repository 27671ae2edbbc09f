import { AuditService } from '../audit/audit.service.js';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ArticlesService } from '../articles/articles.service.js';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import type { ProjectScope } from '../projects/project-scope.js';
import { AgentConfigsRepository, type AgentConfigRow } from './agent-configs.repository.js';
import { buildProjectContext, proposeAnswers, type ProjectContext, type ProposedQuestion } from './project-context.js';
import { WRITER_QUESTION_IDS, WRITER_QUESTIONS, type WriterAnswers } from './writer-questions.js';

export const AGENTS = ['writer'] as const;
export type AgentName = (typeof AGENTS)[number];

/** One stored version of an agent's config. */
export interface AgentConfigVersion {
  /** 1 for the first config of the project, +1 at each `configure_agent`. */
  version: number;
  answers: WriterAnswers;
  created_at: Date;
}

/** What `get_agent_config` and `configure_agent` answer. */
export interface AgentConfigView {
  agent: AgentName;
  config: AgentConfigVersion | null;
}

/** The `setup_required` answer of a writing tool in a project without a writer config. */
export interface SetupRequired {
  status: 'setup_required';
  agent: AgentName;
  message: string;
  questions: ProposedQuestion[];
  project_context: ProjectContext;
}

/** Articles read to build the project context: the most recently updated ones. */
const CONTEXT_SAMPLE = 500;
/** Project contexts kept per instance (about 2 KB each); the oldest goes first. */
const MAX_CONTEXTS = 1_000;

@Injectable()
export class AgentsService {
  /** Contexts by project, each with the generation of the project's articles it was computed at. */
  private readonly contexts = new Map<string, { generation: string | null; context: ProjectContext }>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly configs: AgentConfigsRepository,
    private readonly articles: ArticlesService,
    private readonly audit: AuditService,
  ) {}

  /** The latest config of the agent in the project. */
  async get(scope: ProjectScope, agent: AgentName): Promise<AgentConfigView> {
    const row = await this.configs.latest(scope, agent);
    return { agent, config: row ? versionView(row) : null };
  }

  /** One version of the agent's config (the one a job was enqueued with). */
  async getVersion(scope: ProjectScope, agent: AgentName, version: number): Promise<AgentConfigVersion> {
    const row = await this.configs.version(scope, agent, version);
    if (!row)
      throw new DomainError('not_found', `The ${agent} config version ${version} of this project no longer exists; call configure_agent, then try again.`);
    return versionView(row);
  }

  /** The latest `limit` versions of the agent's config, newest first (the console's history). */
  async versions(scope: ProjectScope, agent: AgentName, limit: number): Promise<AgentConfigVersion[]> {
    return (await this.configs.versions(scope, agent, limit)).map(versionView);
  }

  /**
   * Stores the answers as a new version. Answers not given keep their value from the previous
   * version; values are trimmed. Concurrent calls get distinct, consecutive versions.
   */
  async configure(scope: ProjectScope, agent: AgentName, answers: WriterAnswers, credentialId: string | null): Promise<AgentConfigView> {
    const clean: WriterAnswers = {};
    for (const [id, value] of Object.entries(answers)) {
      // The tool's schema checked these already; a service keeps its own guarantees (the console's
      // form has no schema in front of it).
      const question = WRITER_QUESTIONS.find((q) => q.id === id);
      if (!question) throw new DomainError('invalid_arguments', `Unknown question id "${id}"; the questions are ${WRITER_QUESTION_IDS.join(', ')}.`);
      if (typeof value !== 'string') throw new DomainError('invalid_arguments', `The answer to "${id}" must be a string.`);
      const answer = value.trim();
      if (question.options && !question.options.includes(answer))
        throw new DomainError('invalid_arguments', `The answer to "${id}" must be one of ${question.options.join(', ')}.`);
      if (answer.length > question.maxLength)
        throw new DomainError('invalid_arguments', `The answer to "${id}" is longer than ${question.maxLength} characters.`);
      clean[question.id] = answer;
    }
    const row = await this.db.transaction(async (m) => {
      // One writer at a time per project and agent: versions are consecutive and merges see the latest.
      await this.configs.lock(scope, agent, m);
      const latest = await this.configs.latestAnswers(scope, agent, m);
      const merged = ordered({ ...(latest?.answers ?? {}), ...clean });
      const saved = await this.configs.insert(newId(), scope, agent, (latest?.version ?? 0) + 1, merged, credentialId, m);
      await this.audit.record(m, {
        action: 'writer_config.saved',
        accountId: scope.accountId,
        target: { project_id: scope.projectId, agent, version: String(saved.version), credential_id: credentialId },
        change: { before: latest?.answers ?? null, after: merged },
      });
      return saved;
    });
    return { agent, config: versionView(row) };
  }

  /** The handshake answer: the questions, with answers proposed from the project's own articles. */
  async setupRequired(scope: ProjectScope, project: { id: string; name: string }): Promise<SetupRequired> {
    const context = { ...(await this.projectContext(scope, project)), project: { id: project.id, name: project.name } };
    return {
      status: 'setup_required',
      agent: 'writer',
      message: 'This project has no writer configured. Ask the user these questions, proposing the answers below, then call configure_agent and retry.',
      questions: proposeAnswers(context),
      project_context: context,
    };
  }

  /**
   * The context of the project's articles, computed once per generation of them: the generation is
   * bumped by every write touching a live article, in that write's transaction, so a context cached
   * at the current generation is exact whichever instance wrote since (no TTL to wait out). A hit costs
   * one primary-key read. The generation is read before the sample: a write committed in between
   * changes it, and the next call computes again.
   */
  private async projectContext(scope: ProjectScope, project: { id: string; name: string }): Promise<ProjectContext> {
    const key = `${scope.accountId}/${scope.projectId}`;
    const { total, generation } = await this.articles.contextStamp(scope);
    const cached = this.contexts.get(key);
    if (cached && cached.generation === generation) return cached.context;
    const context = buildProjectContext(project, total, await this.articles.contextSample(scope, CONTEXT_SAMPLE));
    this.contexts.delete(key);
    if (this.contexts.size >= MAX_CONTEXTS) this.contexts.delete(this.contexts.keys().next().value!);
    this.contexts.set(key, { generation, context });
    return context;
  }
}

function versionView(row: AgentConfigRow): AgentConfigVersion {
  return { version: row.version, answers: row.answers as WriterAnswers, created_at: row.created_at };
}

/** Answers in question order, so stored configs read the same way every time. */
function ordered(answers: WriterAnswers): WriterAnswers {
  const out: WriterAnswers = {};
  for (const q of WRITER_QUESTIONS) if (answers[q.id] !== undefined) out[q.id] = answers[q.id];
  return out;
}
