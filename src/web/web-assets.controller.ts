import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { STYLESHEET } from './stylesheet.js';

/** The stylesheet the server's pages link to. */
@ApiExcludeController()
@Controller('assets')
export class WebAssetsController {
  @Get('reblog.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  @Header('X-Content-Type-Options', 'nosniff')
  stylesheet(): string {
    return STYLESHEET;
  }
}
