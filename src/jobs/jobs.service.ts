import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import type { Job } from './job.entity.js';

export interface JobView {
  id: string;
  tool: string;
  project_id: string;
  status: Job['status'];
  progress: number;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface JobFilter {
  status?: string;
  project_id?: string;
  /** Restricts to these projects (a credential's reachable ones). */
  project_ids?: string[];
}

@Injectable()
export class JobsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async list(accountId: string, filter: JobFilter, limit = 50, cursor?: string): Promise<Page<JobView>> {
    const after = decodeCursor(cursor);
    const params: unknown[] = [accountId];
    const where = ['account_id = $1'];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (after) add('id < ?', after);
    if (filter.status) add('status = ?', filter.status);
    if (filter.project_id) add('project_id = ?', filter.project_id);
    if (filter.project_ids) add('project_id = ANY(?)', filter.project_ids);
    params.push(limit + 1);
    const rows = (await this.db.query(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`, params)) as Job[];
    return toPage(rows, limit, jobView);
  }
}

export function jobView(j: Job): JobView {
  return {
    id: j.id,
    tool: j.tool,
    project_id: j.project_id,
    status: j.status,
    progress: j.progress,
    ...(j.result ? { result: j.result } : {}),
    ...(j.error ? { error: j.error } : {}),
    created_at: j.created_at,
    started_at: j.started_at,
    finished_at: j.finished_at,
  };
}
