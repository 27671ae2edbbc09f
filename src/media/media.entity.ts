import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('media')
export class Media {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('uuid') project_id: string;
  @Column('uuid', { nullable: true }) job_id: string | null;
  @Column('text') mime_type: string;
  @Column('int') width: number;
  @Column('int') height: number;
  @Column('int') size: number;
  @Column('bytea', { select: false }) data: Buffer;
  @Column('timestamptz') created_at: Date;
}
