import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { OriginGuard } from '../mcp/mcp.guards.js';
import { WellKnownController } from './discovery/well-known.controller.js';
import { OAuthEdgeMiddleware, OAuthFallback } from './oauth-edge.js';

/**
 * The OAuth 2.1 authorization server of /mcp (spec/oauth.md): discovery, client registration and
 * metadata documents, authorize and consent, tokens and revocation. The grant it makes is the
 * product's own credential record, so /mcp needs no second path for it.
 */
@Module({
  controllers: [WellKnownController],
  // OriginGuard is stateless (built from the config): the Host rule is its check, reused here.
  providers: [OriginGuard, OAuthEdgeMiddleware, OAuthFallback],
})
export class OAuthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(OAuthEdgeMiddleware).forRoutes({ path: 'oauth/*path', method: RequestMethod.ALL }, { path: '.well-known/*path', method: RequestMethod.ALL });
  }
}
