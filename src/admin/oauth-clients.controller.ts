import { Controller, Delete, Get, HttpCode, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { PageQuery } from '../common/pagination.js';
import { OAuthClientsService } from '../oauth/clients/oauth-clients.service.js';
import { AdminGuard } from './admin.guard.js';

/** The OAuth clients that registered or were fetched (docs/admin-api.md#oauth-clients). */
@ApiTags('oauth-clients')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/oauth-clients')
export class OAuthClientsController {
  constructor(private readonly clients: OAuthClientsService) {}

  @Get()
  list(@Query() query: PageQuery) {
    return this.clients.list(query.limit, query.cursor);
  }

  /** A metadata-document client's id is its URL: send it percent-encoded as one path segment. */
  @Delete(':client_id')
  @HttpCode(204)
  async remove(@Param('client_id') clientId: string): Promise<void> {
    await this.clients.remove(clientId);
  }
}
