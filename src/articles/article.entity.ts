import { Column, Entity, PrimaryColumn } from 'typeorm';

export const ARTICLE_STATUSES = ['draft', 'scheduled', 'published', 'archived'] as const;
export type ArticleStatus = (typeof ARTICLE_STATUSES)[number];

@Entity('articles')
export class Article {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('uuid') project_id: string;
  @Column('text') handle: string;
  @Column('text') title: string;
  @Column('text') excerpt: string;
  @Column('text') body: string;
  /** Words in the body, counted by a trigger on every write (migration 1764650000000). */
  @Column('int') word_count: number;
  @Column('text') status: ArticleStatus;
  @Column('text', { array: true }) tags: string[];
  @Column('timestamptz', { nullable: true }) published_at: Date | null;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
  @Column('int') version: number;
  @Column('uuid', { nullable: true }) featured_image_id: string | null;
  @Column('text') source: 'human' | 'ai';
  @Column('uuid', { nullable: true }) job_id: string | null;
  @Column('int', { nullable: true }) agent_config_version: number | null;
  @Column('timestamptz', { nullable: true }) deleted_at: Date | null;
  @Column('uuid', { nullable: true }) deleted_by: string | null;
}

@Entity('article_revisions')
export class ArticleRevision {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('uuid') article_id: string;
  @Column('int') version: number;
  @Column('jsonb') snapshot: Record<string, unknown>;
  @Column('uuid', { nullable: true }) credential_id: string | null;
  @Column('timestamptz') created_at: Date;
}
