import { AuditModule } from '../audit/audit.module.js';
import { IdentityProvidersModule } from '../identity-providers/identity-providers.module.js';
import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { RateLimitStoreModule } from '../rate-limit/rate-limit.module.js';
import { LoginLinksModule } from '../login-links/login-links.module.js';
import { UsersModule } from '../users/users.module.js';
import { WebModule } from '../web/web.module.js';
import { AuthorizationsRepository } from './authorize/authorizations.repository.js';
import { AuthorizeController } from './authorize/authorize.controller.js';
import { AuthorizeService } from './authorize/authorize.service.js';
import { BrowserSessionGuard } from './authorize/browser-session.guard.js';
import { OAuthClientsRepository } from './clients/oauth-clients.repository.js';
import { OAuthClientsService } from './clients/oauth-clients.service.js';
import { RegistrationController } from './clients/registration.controller.js';
import { WellKnownController } from './discovery/well-known.controller.js';
import { IpRateLimitGuard } from './ip-rate-limit.guard.js';
import { OAuthEdgeMiddleware, OAuthFallback } from './oauth-edge.js';
import { OAuthPurgeService } from './oauth-purge.service.js';
import { GrantsRepository } from './tokens/grants.repository.js';
import { TokenController } from './tokens/token.controller.js';
import { TokensService } from './tokens/tokens.service.js';

/**
 * The OAuth 2.1 authorization server of /mcp (docs/oauth.md): discovery, client registration and
 * metadata documents, authorize and consent, tokens and revocation. The grant it makes is the
 * product's own credential record, so /mcp needs no second path for it.
 */
@Module({
  imports: [AuthModule, RateLimitStoreModule, UsersModule, WebModule, LoginLinksModule, AuditModule, IdentityProvidersModule],
  controllers: [WellKnownController, RegistrationController, AuthorizeController, TokenController],
  providers: [
    OAuthEdgeMiddleware,
    OAuthFallback,
    IpRateLimitGuard,
    OAuthClientsService,
    OAuthClientsRepository,
    OAuthPurgeService,
    AuthorizeService,
    AuthorizationsRepository,
    BrowserSessionGuard,
    TokensService,
    GrantsRepository,
  ],
  exports: [OAuthClientsService],
})
export class OAuthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(OAuthEdgeMiddleware).forRoutes({ path: 'oauth/*path', method: RequestMethod.ALL }, { path: '.well-known/*path', method: RequestMethod.ALL });
  }
}
