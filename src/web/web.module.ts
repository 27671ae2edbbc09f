import { Module } from '@nestjs/common';
import { BrowserSessionsRepository } from './browser-sessions.repository.js';
import { BrowserSessionsService } from './browser-sessions.service.js';
import { PagePolicy } from './page-policy.js';
import { WebAssetsController } from './web-assets.controller.js';

/**
 * What the server's HTML pages share: the signed-in browser session (`rb_session`), the Host and
 * cross-site rules of every page ({@link PagePolicy}), the stylesheet, and in this folder the page
 * layout with its security headers and the escaping `html` template.
 */
@Module({
  controllers: [WebAssetsController],
  providers: [BrowserSessionsService, BrowserSessionsRepository, PagePolicy],
  exports: [BrowserSessionsService, PagePolicy],
})
export class WebModule {}
