import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, sql, type Queryable } from '../database/sql.js';
import type { ProjectScope } from '../projects/project-scope.js';
import type { Media } from './media.entity.js';

/** An image's description, without its bytes. */
export type MediaRow = Pick<Media, 'id' | 'mime_type' | 'width' | 'height'>;

const insert = sql<
  [id: string, accountId: string, projectId: string, jobId: string | null, mimeType: string, width: number, height: number, size: number, data: Buffer],
  MediaRow
>(
  'media.insert',
  `INSERT INTO media (id, account_id, project_id, job_id, mime_type, width, height, size, data)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
   ON CONFLICT (job_id) WHERE job_id IS NOT NULL DO NOTHING
   RETURNING id, mime_type, width, height`,
);
const findByJob = sql<[jobId: string | null, accountId: string], MediaRow>(
  'media.find_by_job',
  `SELECT id, mime_type, width, height FROM media WHERE job_id = $1 AND account_id = $2`,
);
const findWithData = sql<[id: string, accountId: string, projectIds: readonly string[]], Media>(
  'media.find_with_data',
  `SELECT * FROM media WHERE id = $1 AND account_id = $2 AND project_id = ANY($3::uuid[])`,
);

/** The statements of `media`. */
@Injectable()
export class MediaRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Stores an image; null when its job stored one already. */
  insert(
    id: string,
    scope: ProjectScope,
    m: { jobId: string | null; mimeType: string; width: number; height: number; data: Buffer },
    db: Queryable = this.db,
  ): Promise<MediaRow | null> {
    return row(db, insert, [id, scope.accountId, scope.projectId, m.jobId, m.mimeType, m.width, m.height, m.data.length, m.data]);
  }

  findByJob(accountId: string, jobId: string | null, db: Queryable = this.db): Promise<MediaRow | null> {
    return row(db, findByJob, [jobId, accountId]);
  }

  /** The image with its bytes, if it belongs to the account and to one of `projectIds`. */
  findWithData(accountId: string, projectIds: readonly string[], id: string, db: Queryable = this.db): Promise<Media | null> {
    return row(db, findWithData, [id, accountId, projectIds]);
  }
}
