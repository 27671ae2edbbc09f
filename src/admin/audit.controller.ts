import { Controller, Get, Param, ParseUUIDPipe, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AccountsService } from '../accounts/accounts.service.js';
import { AuditService } from '../audit/audit.service.js';
import { AuditQueryDto } from './admin.dto.js';
import { AdminGuard } from './admin.guard.js';

const uuid = new ParseUUIDPipe({ version: undefined });

/** The audit trail of administrative acts, newest first (docs/admin-api.md#audit-trail): read only. */
@ApiTags('audit')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1')
export class AuditController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly audit: AuditService,
  ) {}

  @Get('accounts/:account_id/audit')
  async listAccount(@Param('account_id', uuid) accountId: string, @Query() query: AuditQueryDto) {
    await this.accounts.get(accountId);
    const { limit, cursor, ...filter } = query;
    return this.audit.list(accountId, filter, limit, cursor);
  }

  @Get('audit')
  list(@Query() query: AuditQueryDto) {
    const { limit, cursor, ...filter } = query;
    return this.audit.list(null, filter, limit, cursor);
  }
}
