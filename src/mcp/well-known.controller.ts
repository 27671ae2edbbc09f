import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SCOPES } from '../common/tool-names.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';

/** OAuth 2.0 Protected Resource Metadata (RFC 9728) of /mcp, named by the 401 challenge. */
@ApiExcludeController()
@Controller('.well-known')
export class WellKnownController {
  private readonly metadata: Record<string, unknown>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.metadata = {
      resource: `${config.publicUrl}/mcp`,
      resource_name: 'Reblog MCP',
      bearer_methods_supported: ['header'],
      scopes_supported: SCOPES,
    };
  }

  @Get(['oauth-protected-resource', 'oauth-protected-resource/mcp'])
  protectedResource() {
    return this.metadata;
  }
}
