import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IdentityProvidersService } from '../identity-providers/identity-providers.service.js';
import { AdminGuard } from './admin.guard.js';
import { CreateIdentityProviderDto, UpdateIdentityProviderDto } from './identity-providers.dto.js';

const uuid = new ParseUUIDPipe({ version: undefined });

/** The identity providers an account trusts (docs/admin-api.md#identity-providers). */
@ApiTags('identity-providers')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/accounts/:account_id/identity-providers')
export class IdentityProvidersController {
  constructor(private readonly providers: IdentityProvidersService) {}

  @Get()
  async list(@Param('account_id', uuid) accountId: string) {
    return { items: await this.providers.list(accountId) };
  }

  @Post()
  create(@Param('account_id', uuid) accountId: string, @Body() body: CreateIdentityProviderDto) {
    return this.providers.create(accountId, body);
  }

  @Get(':idp_id')
  get(@Param('account_id', uuid) accountId: string, @Param('idp_id', uuid) id: string) {
    return this.providers.get(accountId, id);
  }

  @Patch(':idp_id')
  update(@Param('account_id', uuid) accountId: string, @Param('idp_id', uuid) id: string, @Body() body: UpdateIdentityProviderDto) {
    return this.providers.update(accountId, id, body);
  }

  @Delete(':idp_id')
  @HttpCode(204)
  async remove(@Param('account_id', uuid) accountId: string, @Param('idp_id', uuid) id: string) {
    await this.providers.remove(accountId, id);
  }
}
