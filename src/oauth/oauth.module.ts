import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { OriginGuard } from '../mcp/mcp.guards.js';
import { RateLimitStoreModule } from '../rate-limit/rate-limit.module.js';
import { OAuthClientsRepository } from './clients/oauth-clients.repository.js';
import { OAuthClientsService } from './clients/oauth-clients.service.js';
import { RegistrationController } from './clients/registration.controller.js';
import { WellKnownController } from './discovery/well-known.controller.js';
import { IpRateLimitGuard } from './ip-rate-limit.guard.js';
import { OAuthEdgeMiddleware, OAuthFallback } from './oauth-edge.js';
import { OAuthPurgeService } from './oauth-purge.service.js';

/**
 * The OAuth 2.1 authorization server of /mcp (spec/oauth.md): discovery, client registration and
 * metadata documents, authorize and consent, tokens and revocation. The grant it makes is the
 * product's own credential record, so /mcp needs no second path for it.
 */
@Module({
  imports: [RateLimitStoreModule],
  controllers: [WellKnownController, RegistrationController],
  providers: [
    // OriginGuard is stateless (built from the config): the Host rule is its check, reused here.
    OriginGuard,
    OAuthEdgeMiddleware,
    OAuthFallback,
    IpRateLimitGuard,
    OAuthClientsService,
    OAuthClientsRepository,
    OAuthPurgeService,
  ],
  exports: [OAuthClientsService],
})
export class OAuthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(OAuthEdgeMiddleware).forRoutes({ path: 'oauth/*path', method: RequestMethod.ALL }, { path: '.well-known/*path', method: RequestMethod.ALL });
  }
}
