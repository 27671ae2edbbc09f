import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '../accounts/accounts.module.js';
import { Project } from './project.entity.js';
import { ProjectsService } from './projects.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Project]), AccountsModule],
  providers: [ProjectsService],
  exports: [ProjectsService],
})
export class ProjectsModule {}
