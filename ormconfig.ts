// The DataSource the TypeORM CLI uses (npm run migration:generate); the app builds the same options.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source.js';
import { Account } from './src/accounts/account.entity.js';
import { ActivityEntry } from './src/activity/activity-entry.entity.js';
import { AgentConfig } from './src/agents/agent-config.entity.js';
import { Article, ArticleRevision } from './src/articles/article.entity.js';
import { Credential, CredentialProject } from './src/auth/credential.entity.js';
import { Job } from './src/jobs/job.entity.js';
import { McpSession } from './src/mcp/mcp-session.entity.js';
import { Media } from './src/media/media.entity.js';
import { Project } from './src/projects/project.entity.js';

if (!process.env.DATABASE_URL) throw new Error('Set DATABASE_URL to use the TypeORM CLI.');

/** The entities, for the CLI to compare with the schema; the app itself reads none (see dataSourceOptions). */
const ENTITIES = [Account, Project, Credential, CredentialProject, McpSession, Article, ArticleRevision, AgentConfig, Job, Media, ActivityEntry];

export default new DataSource({ ...dataSourceOptions(process.env.DATABASE_URL), entities: ENTITIES });
