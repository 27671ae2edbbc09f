import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post, Put, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { PageQuery } from '../common/pagination.js';
import { MembershipsService } from '../people/memberships.service.js';
import { PeopleService } from '../people/people.service.js';
import { AdminGuard } from './admin.guard.js';
import { AccountMemberDto, CreateUserDto, ProjectMemberDto, UpdateUserDto, UsersQuery } from './people.dto.js';

const uuid = new ParseUUIDPipe({ version: undefined });

@ApiTags('people')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/users')
export class UsersController {
  constructor(private readonly people: PeopleService) {}

  @Post()
  create(@Body() body: CreateUserDto) {
    return this.people.create(body);
  }

  @Get()
  list(@Query() query: UsersQuery) {
    return this.people.list(query.email, query.limit, query.cursor);
  }

  @Get(':user_id')
  get(@Param('user_id', uuid) id: string) {
    return this.people.get(id);
  }

  @Patch(':user_id')
  update(@Param('user_id', uuid) id: string, @Body() body: UpdateUserDto) {
    return this.people.update(id, body);
  }
}

@ApiTags('people')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1')
export class MembersController {
  constructor(private readonly memberships: MembershipsService) {}

  @Put('accounts/:account_id/members/:user_id')
  putAccountMember(@Param('account_id', uuid) accountId: string, @Param('user_id', uuid) userId: string, @Body() body: AccountMemberDto) {
    return this.memberships.putAccountMember(accountId, userId, body.role);
  }

  @Get('accounts/:account_id/members')
  listAccountMembers(@Param('account_id', uuid) accountId: string, @Query() query: PageQuery) {
    return this.memberships.listAccountMembers(accountId, query.limit, query.cursor);
  }

  @Delete('accounts/:account_id/members/:user_id')
  @HttpCode(204)
  async deleteAccountMember(@Param('account_id', uuid) accountId: string, @Param('user_id', uuid) userId: string) {
    await this.memberships.deleteAccountMember(accountId, userId);
  }

  @Put('projects/:project_id/members/:user_id')
  putProjectMember(@Param('project_id', uuid) projectId: string, @Param('user_id', uuid) userId: string, @Body() body: ProjectMemberDto) {
    return this.memberships.putProjectMember(projectId, userId, body.role);
  }

  @Get('projects/:project_id/members')
  listProjectMembers(@Param('project_id', uuid) projectId: string, @Query() query: PageQuery) {
    return this.memberships.listProjectMembers(projectId, query.limit, query.cursor);
  }

  @Delete('projects/:project_id/members/:user_id')
  @HttpCode(204)
  async deleteProjectMember(@Param('project_id', uuid) projectId: string, @Param('user_id', uuid) userId: string) {
    await this.memberships.deleteProjectMember(projectId, userId);
  }
}
