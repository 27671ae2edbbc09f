import { Body, Controller, Headers, HttpCode, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { IpLimited, IpRateLimitGuard } from '../ip-rate-limit.guard.js';
import { OAuthErrorFilter } from '../oauth-error.js';
import { TokensService } from './tokens.service.js';

/** `POST /oauth/token` (RFC 6749 §3.2) and `POST /oauth/revoke` (RFC 7009), form-encoded. */
@ApiExcludeController()
@UseFilters(OAuthErrorFilter)
@UseGuards(IpRateLimitGuard)
@Controller('oauth')
export class TokenController {
  constructor(private readonly tokens: TokensService) {}

  @Post('token')
  @HttpCode(200)
  @IpLimited('token')
  token(@Body() form: Record<string, unknown>, @Headers('authorization') authorization?: string) {
    return this.tokens.token(form ?? {}, authorization);
  }

  @Post('revoke')
  @HttpCode(200)
  revoke(@Body() form: Record<string, unknown>, @Headers('authorization') authorization?: string) {
    return this.tokens.revoke(form ?? {}, authorization);
  }
}
