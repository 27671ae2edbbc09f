import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CompanySignInService, type CompanyForm } from './company/company-sign-in.service.js';
import { OidcSignInService } from './oidc/oidc-sign-in.service.js';
import { SignInService, type SignInForm } from './sign-in.service.js';

// Form and query fields arrive as plain objects (no DTO class): the pages answer every refusal as a
// page, which the services decide, and the global ValidationPipe leaves untyped objects alone.

/** The sign-in pages: a login link's page and form, sign-out, the identity providers' starts (server-wide, an account's) and their callback. */
@ApiExcludeController()
@Controller('oauth')
export class SignInController {
  constructor(
    private readonly signIn: SignInService,
    private readonly oidc: OidcSignInService,
    private readonly company: CompanySignInService,
  ) {}

  @Get('login')
  page(@Req() req: Request, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    return this.signIn.showSignIn(req, res, query);
  }

  @Post('login')
  signInWithLink(@Req() req: Request, @Res() res: Response, @Body() form: SignInForm | undefined): Promise<void> {
    return this.signIn.signInWithLink(req, res, form ?? {});
  }

  @Post('logout')
  signOut(@Req() req: Request, @Res() res: Response, @Body() form: Record<string, unknown> | undefined): Promise<void> {
    return this.signIn.signOut(req, res, form ?? {});
  }

  @Get('login/oidc')
  startOidc(@Req() req: Request, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    return this.oidc.start(req, res, query);
  }

  @Post('login/company')
  signInWithCompany(@Req() req: Request, @Res() res: Response, @Body() form: CompanyForm | undefined): Promise<void> {
    return this.company.submit(req, res, form ?? {});
  }

  @Get('callback/oidc')
  oidcCallback(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.oidc.callback(req, res);
  }
}
