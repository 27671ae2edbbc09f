import { Module } from '@nestjs/common';
import { BrowserSessionsRepository } from './browser-sessions.repository.js';
import { BrowserSessionsService } from './browser-sessions.service.js';
import { WebAssetsController } from './web-assets.controller.js';

/**
 * What the server's HTML pages share: the signed-in browser session (`rb_session`), the stylesheet,
 * and in this folder the page layout with its security headers and the escaping `html` template.
 */
@Module({
  controllers: [WebAssetsController],
  providers: [BrowserSessionsService, BrowserSessionsRepository],
  exports: [BrowserSessionsService],
})
export class WebModule {}
