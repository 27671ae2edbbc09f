import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { PeopleModule } from '../people/people.module.js';
import { RateLimitStoreModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { WebModule } from '../web/web.module.js';
import { LoginCsrf } from './login-csrf.js';
import { LoginLinksModule } from '../login-links/login-links.module.js';
import { LoginRateLimitMiddleware } from './login-rate-limit.middleware.js';
import { CompanySignInRepository } from './company/company-sign-in.repository.js';
import { CompanySignInService } from './company/company-sign-in.service.js';
import { OidcFlow } from './oidc/oidc-flow.js';
import { OidcSignInService } from './oidc/oidc-sign-in.service.js';
import { OidcRepository } from './oidc/oidc.repository.js';
import { ProxySignInMiddleware } from './proxy-sign-in.middleware.js';
import { SignInController } from './sign-in.controller.js';
import { SignInService } from './sign-in.service.js';

/**
 * Signing people in (docs/oauth.md#signing-in): `link` (single-use login links), `oidc` (the company's
 * identity provider), `proxy` (a trusted gateway's header) and, beside them, each account's own
 * identity provider (the work-email form), each ending in an `rb_session`
 * browser session. Exports {@link SignInService} for the pages whose visitor must sign in first
 * (consent, console): `showSignIn(req, res, { return_to })`.
 */
@Module({
  imports: [LoginLinksModule, UsersModule, PeopleModule, WebModule, RateLimitStoreModule],
  controllers: [SignInController],
  providers: [
    SignInService,
    LoginCsrf,
    OidcFlow,
    OidcSignInService,
    OidcRepository,
    CompanySignInService,
    CompanySignInRepository,
    ProxySignInMiddleware,
    LoginRateLimitMiddleware,
  ],
  exports: [SignInService],
})
export class SignInModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(LoginRateLimitMiddleware)
      .forRoutes(
        { path: 'oauth/login', method: RequestMethod.ALL },
        { path: 'oauth/login/oidc', method: RequestMethod.GET },
        { path: 'oauth/login/company', method: RequestMethod.POST },
        { path: 'oauth/callback/oidc', method: RequestMethod.GET },
      );
    // Every /oauth and /console path, `/console/` and `/console` included (strict routing); the middleware
    // itself leaves the client endpoints of /oauth alone.
    consumer
      .apply(ProxySignInMiddleware)
      .forRoutes(
        { path: 'oauth/{*path}', method: RequestMethod.ALL },
        { path: 'console', method: RequestMethod.ALL },
        { path: 'console/{*path}', method: RequestMethod.ALL },
      );
  }
}
