import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('projects')
export class Project {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') account_id: string;
  @Column('text') name: string;
  @Column('text', { array: true }) disabled_tools: string[];
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
