import { Controller, Get, Inject, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SCOPES } from '../../common/tool-names.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import { JWT_BEARER } from '../clients/client-metadata.js';
import { OAuthErrorFilter } from '../oauth-error.js';

/** OAuth 2.0 Protected Resource Metadata of /mcp (RFC 9728). */
export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: `${publicUrl}/mcp`,
    authorization_servers: [publicUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
  };
}

/**
 * Authorization Server Metadata (RFC 8414); every URL is built on PUBLIC_URL, never on the request's
 * Host. Client metadata documents are advertised unless OAUTH_CLIENT_METADATA_DOCUMENTS=false: clients
 * that see `false` register themselves instead.
 */
export function authorizationServerMetadata(publicUrl: string, clientMetadataDocuments: boolean) {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/oauth/authorize`,
    token_endpoint: `${publicUrl}/oauth/token`,
    registration_endpoint: `${publicUrl}/oauth/register`,
    revocation_endpoint: `${publicUrl}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token', JWT_BEARER],
    // The ID-JAG profile of the JWT bearer grant (docs/oauth.md#enterprise-managed-authorization).
    authorization_grant_profiles_supported: ['urn:ietf:params:oauth:grant-profile:id-jag'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    scopes_supported: [...SCOPES],
    client_id_metadata_document_supported: clientMetadataDocuments,
    authorization_response_iss_parameter_supported: true,
  };
}

/** The discovery documents: where /mcp's authorization server is, and what it supports. */
@ApiExcludeController()
@UseFilters(OAuthErrorFilter)
@Controller('.well-known')
export class WellKnownController {
  private readonly resource: ReturnType<typeof protectedResourceMetadata>;
  private readonly server: ReturnType<typeof authorizationServerMetadata>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.resource = protectedResourceMetadata(config.publicUrl);
    this.server = authorizationServerMetadata(config.publicUrl, config.oauth.clientMetadataDocuments);
  }

  /** Both paths answer the same document: the 401 challenge names the first, RFC 9728 §3.1 derives the second from /mcp. */
  @Get(['oauth-protected-resource', 'oauth-protected-resource/mcp'])
  protectedResource() {
    return this.resource;
  }

  /** RFC 8414, and the OpenID path for clients that only try that one. */
  @Get(['oauth-authorization-server', 'openid-configuration'])
  authorizationServer() {
    return this.server;
  }
}
