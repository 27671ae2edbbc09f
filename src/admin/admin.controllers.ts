import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AccountsService } from '../accounts/accounts.service.js';
import { ActivityReportsService } from '../activity/activity-reports.service.js';
import { CredentialsService, type CredentialView } from '../auth/credentials.service.js';
import { PageQuery } from '../common/pagination.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import { ActivityQuery, CreateAccountDto, CreateApiKeyDto, CreateGrantDto, CreateProjectDto, JobsQuery, UpdateProjectDto } from './admin.dto.js';
import { AdminGuard } from './admin.guard.js';

const uuid = new ParseUUIDPipe({ version: undefined });

@ApiTags('accounts')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Post()
  create(@Body() body: CreateAccountDto) {
    return this.accounts.create(body);
  }

  @Get(':account_id')
  get(@Param('account_id', uuid) id: string) {
    return this.accounts.get(id);
  }
}

@ApiTags('projects')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Post('accounts/:account_id/projects')
  create(@Param('account_id', uuid) accountId: string, @Body() body: CreateProjectDto) {
    return this.projects.create(accountId, body);
  }

  @Get('accounts/:account_id/projects')
  list(@Param('account_id', uuid) accountId: string, @Query() query: PageQuery) {
    return this.projects.list(accountId, query.limit, query.cursor);
  }

  @Patch('projects/:project_id')
  update(@Param('project_id', uuid) id: string, @Body() body: UpdateProjectDto) {
    return this.projects.update(id, body);
  }
}

const keyView = ({ id, name, prefix, scopes, projects, revoked_at, created_at, created_by }: CredentialView) => ({
  id,
  name,
  key_prefix: prefix,
  scopes,
  projects,
  revoked_at,
  created_at,
  created_by,
});
const grantView = ({
  id,
  name,
  prefix,
  scopes,
  projects,
  expires_at,
  revoked_at,
  created_at,
  source,
  user_id,
  client_id,
  revoked_reason,
  via,
}: CredentialView) => ({
  id,
  client_name: name,
  token_prefix: prefix,
  scopes,
  projects,
  expires_at,
  revoked_at,
  created_at,
  source,
  user_id,
  client_id,
  revoked_reason,
  via,
});

@ApiTags('credentials')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1')
export class CredentialsController {
  constructor(private readonly credentials: CredentialsService) {}

  @Post('accounts/:account_id/api-keys')
  async createKey(@Param('account_id', uuid) accountId: string, @Body() body: CreateApiKeyDto) {
    const { view, secret } = await this.credentials.create(accountId, 'api_key', body);
    const { revoked_at: _revoked, ...shown } = keyView(view);
    return { ...shown, key: secret };
  }

  @Get('accounts/:account_id/api-keys')
  async listKeys(@Param('account_id', uuid) accountId: string, @Query() query: PageQuery) {
    const page = await this.credentials.list(accountId, 'api_key', query.limit, query.cursor);
    return { items: page.items.map(keyView), next_cursor: page.next_cursor };
  }

  @Delete('api-keys/:id')
  @HttpCode(204)
  async revokeKey(@Param('id', uuid) id: string) {
    await this.credentials.revoke('api_key', id);
  }

  @Post('accounts/:account_id/grants')
  async createGrant(@Param('account_id', uuid) accountId: string, @Body() body: CreateGrantDto) {
    const { view, secret } = await this.credentials.create(accountId, 'grant', { ...body, name: body.client_name, expiresInSeconds: body.expires_in });
    // The contract's creation answer: the token itself, so neither its prefix nor a revocation time.
    const { revoked_at: _revoked, token_prefix: _prefix, ...shown } = grantView(view);
    return { ...shown, access_token: secret };
  }

  @Get('accounts/:account_id/grants')
  async listGrants(@Param('account_id', uuid) accountId: string, @Query() query: PageQuery) {
    const page = await this.credentials.list(accountId, 'grant', query.limit, query.cursor);
    return { items: page.items.map(grantView), next_cursor: page.next_cursor };
  }

  @Delete('grants/:id')
  @HttpCode(204)
  async revokeGrant(@Param('id', uuid) id: string) {
    await this.credentials.revoke('grant', id);
  }
}

@ApiTags('activity and jobs')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/accounts/:account_id')
export class ActivityController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly activity: ActivityReportsService,
    private readonly jobs: JobsService,
  ) {}

  @Get('activity')
  async listActivity(@Param('account_id', uuid) accountId: string, @Query() query: ActivityQuery) {
    await this.accounts.get(accountId);
    const { limit, cursor, ...filter } = query;
    return this.activity.list(accountId, filter, limit, cursor);
  }

  @Get('jobs')
  async listJobs(@Param('account_id', uuid) accountId: string, @Query() query: JobsQuery) {
    await this.accounts.get(accountId);
    const { limit, cursor, ...filter } = query;
    return this.jobs.list(accountId, filter, limit, cursor);
  }
}
