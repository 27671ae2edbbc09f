import { Body, Controller, HttpCode, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request } from 'express';
import { IpLimited, IpRateLimitGuard } from '../ip-rate-limit.guard.js';
import { OAuthErrorFilter } from '../oauth-error.js';
import { OAuthClientsService } from './oauth-clients.service.js';

/** `POST /oauth/register`: Dynamic Client Registration (RFC 7591). */
@ApiExcludeController()
@UseFilters(OAuthErrorFilter)
@UseGuards(IpRateLimitGuard)
@Controller('oauth')
export class RegistrationController {
  constructor(private readonly clients: OAuthClientsService) {}

  @Post('register')
  @HttpCode(201)
  @IpLimited('register')
  register(@Body() body: unknown, @Req() req: Request) {
    // The server-wide JSON parser accepts 1 MiB: the declared length, or the parsed body's, tells a larger one.
    const size = Math.max(Number(req.headers['content-length']) || 0, Buffer.byteLength(JSON.stringify(body ?? null)));
    return this.clients.register({ body, size, json: req.is('application/json') === 'application/json' });
  }
}
