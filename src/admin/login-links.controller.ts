import { Body, Controller, Param, ParseUUIDPipe, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_LINK_TTL_S, LoginLinksService } from '../login-links/login-links.service.js';
import { MAX_RETURN_TO_LENGTH } from '../login-links/return-to.js';
import { AdminGuard } from './admin.guard.js';

const uuid = new ParseUUIDPipe({ version: undefined });

export class CreateLoginLinkDto {
  @ApiPropertyOptional({ description: `Seconds the link stays usable (default ${DEFAULT_LINK_TTL_S}).`, minimum: 60, maximum: 7 * 86_400 })
  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(7 * 86_400)
  expires_in?: number;

  @ApiPropertyOptional({ description: 'A path on this server to go to after signing in (default /console/).', example: '/console/' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_RETURN_TO_LENGTH)
  return_to?: string;
}

/**
 * Single-use sign-in links for a person (docs/admin-api.md#sign-in-links, docs/oauth.md#sign-in-by-link):
 * the operator sends the link; the person opens it and presses Sign in.
 */
@ApiTags('users')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/users')
export class LoginLinksController {
  constructor(private readonly links: LoginLinksService) {}

  @Post(':user_id/login-links')
  create(@Param('user_id', uuid) userId: string, @Body() body: CreateLoginLinkDto) {
    return this.links.create(userId, body);
  }
}
