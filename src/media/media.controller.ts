import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { PrincipalResolver } from '../auth/principal.resolver.js';
import { bearerToken } from '../common/bearer.js';
import { DomainError } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { MediaReadLimiter } from './media-read-limiter.js';
import { MediaService } from './media.service.js';

/**
 * `GET /media/:id`: the image, to a bearer credential (API key or grant) that reaches its project,
 * within the credential's image-read rate limit (checked before the image is looked up).
 */
@ApiExcludeController()
@Controller('media')
export class MediaController {
  private readonly challenge: string;

  constructor(
    private readonly media: MediaService,
    private readonly resolver: PrincipalResolver,
    private readonly limiter: MediaReadLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.challenge = `Bearer resource_metadata="${config.publicUrl}/.well-known/oauth-protected-resource"`;
  }

  @Get(':id')
  async get(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const token = bearerToken(req.headers.authorization);
    const principal = token ? await this.resolver.resolve(token) : null;
    if (!principal) {
      res.set('WWW-Authenticate', this.challenge);
      throw new DomainError(
        'unauthorized',
        token ? 'The bearer token is unknown, revoked or expired.' : 'Send an API key or access token as "Authorization: Bearer <token>".',
      );
    }
    await this.limiter.take(principal.credential.id);
    const media = await this.media.findWithData(principal.accountId, [...principal.projects.keys()], id);
    // Another account's image, or one of a project this credential does not reach, is an unknown one.
    if (!media) throw new DomainError('not_found', `No image with id "${id}".`);
    res
      .status(200)
      .set({
        'Content-Type': media.mime_type,
        'Content-Length': String(media.data.length),
        'Cache-Control': 'private, max-age=86400, immutable',
        'X-Content-Type-Options': 'nosniff',
        'Content-Disposition': 'inline',
      })
      .end(media.data);
  }
}
