import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CONSOLE_SCRIPT } from './console-script.js';
import { STYLESHEET } from './stylesheet.js';

/** The stylesheet the server's pages link to, and the console's one script. */
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

  @Get('console.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=3600')
  @Header('X-Content-Type-Options', 'nosniff')
  consoleScript(): string {
    return CONSOLE_SCRIPT;
  }
}
