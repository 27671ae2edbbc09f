import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { isUuid, newId } from '../common/ids.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { ProjectScope } from '../projects/project-scope.js';
import type { Media } from './media.entity.js';
import { MediaRepository } from './media.repository.js';

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
    private readonly media: MediaRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores an image inside the caller's transaction; a job that stored its image already gets that one back. */
  async insert(manager: EntityManager, scope: ProjectScope, input: NewMedia): Promise<MediaView> {
    const created = await this.media.insert(newId(), scope, input, manager);
    if (created) return this.view(created);
    return this.view((await this.media.findByJob(scope.accountId, input.jobId, manager))!);
  }

  /** The image with its bytes, if it belongs to the account and to one of `projectIds`; else null (same as unknown). */
  async findWithData(accountId: string, projectIds: readonly string[], id: string): Promise<Media | null> {
    if (!isUuid(id) || !projectIds.length) return null;
    return this.media.findWithData(accountId, projectIds, id);
  }

  view(m: Pick<Media, 'id' | 'mime_type' | 'width' | 'height'>): MediaView {
    return { id: m.id, url: `${this.config.publicUrl}/media/${m.id}`, mime_type: m.mime_type, width: m.width, height: m.height };
  }
}
