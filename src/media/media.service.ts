import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { ProjectScope } from '../articles/articles.service.js';
import { isUuid, newId } from '../common/ids.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { Media } from './media.entity.js';

/** A stored image as tools show it; `url` is absolute, on PUBLIC_URL. */
export interface MediaView {
  id: string;
  url: string;
  mime_type: string;
  width: number;
  height: number;
}

export interface NewMedia {
  jobId: string | null;
  mimeType: string;
  width: number;
  height: number;
  data: Buffer;
}

/** Images stored in Postgres (`media`, bytea), served at `GET /media/:id`. */
@Injectable()
export class MediaService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores an image inside the caller's transaction; a job that stored its image already gets that one back. */
  async insert(manager: EntityManager, scope: ProjectScope, input: NewMedia): Promise<MediaView> {
    const [created] = (await manager.query(
      `INSERT INTO media (id, account_id, project_id, job_id, mime_type, width, height, size, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (job_id) WHERE job_id IS NOT NULL DO NOTHING
       RETURNING id, mime_type, width, height`,
      [newId(), scope.accountId, scope.projectId, input.jobId, input.mimeType, input.width, input.height, input.data.length, input.data],
    )) as Media[];
    if (created) return this.view(created);
    const [existing] = (await manager.query(`SELECT id, mime_type, width, height FROM media WHERE job_id = $1 AND account_id = $2`, [input.jobId, scope.accountId])) as Media[];
    return this.view(existing);
  }

  /** The image with its bytes, if it belongs to the account and to one of `projectIds`; else null (same as unknown). */
  async findWithData(accountId: string, projectIds: readonly string[], id: string): Promise<(Media & { data: Buffer }) | null> {
    if (!isUuid(id) || !projectIds.length) return null;
    const [row] = (await this.db.query(`SELECT * FROM media WHERE id = $1 AND account_id = $2 AND project_id = ANY($3::uuid[])`, [id, accountId, projectIds])) as (Media & {
      data: Buffer;
    })[];
    return row ?? null;
  }

  view(m: Pick<Media, 'id' | 'mime_type' | 'width' | 'height'>): MediaView {
    return { id: m.id, url: `${this.config.publicUrl}/media/${m.id}`, mime_type: m.mime_type, width: m.width, height: m.height };
  }
}
