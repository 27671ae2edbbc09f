import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('accounts')
export class Account {
  @PrimaryColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('text') owner_email: string;
  @Column('timestamptz') created_at: Date;
}
