import { Module } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { IMAGE_PROVIDER, WRITER_PROVIDER } from './ai.tokens.js';
import { createImageProvider, createWriterProvider } from './provider.factory.js';

/** Provides the writer and image providers chosen by the config (needs `ConfigModule.forRoot`). */
@Module({
  providers: [
    { provide: WRITER_PROVIDER, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createWriterProvider(config) },
    { provide: IMAGE_PROVIDER, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createImageProvider(config) },
  ],
  exports: [WRITER_PROVIDER, IMAGE_PROVIDER],
})
export class AiModule {}
