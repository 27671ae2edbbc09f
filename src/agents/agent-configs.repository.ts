import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, rows, run, sql, type Queryable } from '../database/sql.js';
import type { ProjectScope } from '../projects/project-scope.js';
import type { AgentConfig } from './agent-config.entity.js';

/** A stored version of an agent's config, as the service reads it. */
export type AgentConfigRow = Pick<AgentConfig, 'version' | 'answers' | 'created_at'>;

const latest = sql<[accountId: string, projectId: string, agent: string], AgentConfigRow>(
  'agent_configs.latest',
  `SELECT version, answers, created_at FROM agent_configs WHERE account_id = $1 AND project_id = $2 AND agent = $3 ORDER BY version DESC LIMIT 1`,
);
const byVersion = sql<[accountId: string, projectId: string, agent: string, version: number], AgentConfigRow>(
  'agent_configs.by_version',
  `SELECT version, answers, created_at FROM agent_configs WHERE account_id = $1 AND project_id = $2 AND agent = $3 AND version = $4`,
);
const versions = sql<[accountId: string, projectId: string, agent: string, limit: number], AgentConfigRow>(
  'agent_configs.versions',
  `SELECT version, answers, created_at FROM agent_configs WHERE account_id = $1 AND project_id = $2 AND agent = $3 ORDER BY version DESC LIMIT $4`,
);
const lock = sql<[key: string]>('agent_configs.lock', `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`);
const latestAnswers = sql<[accountId: string, projectId: string, agent: string], Pick<AgentConfig, 'version' | 'answers'>>(
  'agent_configs.latest_answers',
  `SELECT version, answers FROM agent_configs WHERE account_id = $1 AND project_id = $2 AND agent = $3 ORDER BY version DESC LIMIT 1`,
);
const insert = sql<
  [id: string, accountId: string, projectId: string, agent: string, version: number, answers: string, credentialId: string | null],
  AgentConfigRow
>(
  'agent_configs.insert',
  `INSERT INTO agent_configs (id, account_id, project_id, agent, version, answers, credential_id) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
   RETURNING version, answers, created_at`,
);

/** The statements of `agent_configs`: each agent's config of a project, one row per version. */
@Injectable()
export class AgentConfigsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  latest(scope: ProjectScope, agent: string, db: Queryable = this.db): Promise<AgentConfigRow | null> {
    return row(db, latest, [scope.accountId, scope.projectId, agent]);
  }

  version(scope: ProjectScope, agent: string, version: number, db: Queryable = this.db): Promise<AgentConfigRow | null> {
    return row(db, byVersion, [scope.accountId, scope.projectId, agent, version]);
  }

  /** The latest `limit` versions, newest first (the UNIQUE (project_id, agent, version) index serves it). */
  versions(scope: ProjectScope, agent: string, limit: number, db: Queryable = this.db): Promise<AgentConfigRow[]> {
    return rows(db, versions, [scope.accountId, scope.projectId, agent, limit]);
  }

  /** Holds the project's agent config for the caller's transaction: one writer at a time, whether a version exists or not. */
  async lock(scope: ProjectScope, agent: string, db: Queryable): Promise<void> {
    await run(db, lock, [`agent_config:${scope.projectId}:${agent}`]);
  }

  /** The latest version's number and answers, to merge a new version onto. */
  latestAnswers(scope: ProjectScope, agent: string, db: Queryable = this.db): Promise<Pick<AgentConfig, 'version' | 'answers'> | null> {
    return row(db, latestAnswers, [scope.accountId, scope.projectId, agent]);
  }

  async insert(
    id: string,
    scope: ProjectScope,
    agent: string,
    version: number,
    answers: Record<string, string>,
    credentialId: string | null,
    db: Queryable = this.db,
  ): Promise<AgentConfigRow> {
    return (await row(db, insert, [id, scope.accountId, scope.projectId, agent, version, JSON.stringify(answers), credentialId]))!;
  }
}
