import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule } from '../config/config.module.js';
import { loadConfig, type AppConfig } from '../config/config.js';
import { AiModule } from './ai.module.js';
import { IMAGE_PROVIDER, WRITER_PROVIDER } from './ai.tokens.js';
import type { ImageProvider, WriterProvider } from './ai.types.js';
import { LocalImageProvider } from './local-image.provider.js';
import { OpenAiImageProvider } from './openai-image.provider.js';

async function boot(config: AppConfig) {
  @Module({ imports: [ConfigModule.forRoot(config), AiModule] })
  class TestModule {}
  return NestFactory.createApplicationContext(TestModule, { logger: false });
}

describe('AiModule', () => {
  it('provides the local providers by default, with the writer output sanitized', async () => {
    const app = await boot(loadConfig({}));
    try {
      const writer = app.get<WriterProvider>(WRITER_PROVIDER);
      const image = app.get<ImageProvider>(IMAGE_PROVIDER);
      expect([writer.name, image.name]).toEqual(['local', 'local']);
      expect(image).toBeInstanceOf(LocalImageProvider);

      // The local writer copies the brief into the title; the module's writer must clean it.
      const draft = await writer.write(
        { brief: 'Tips <script>alert(1)</script> for [tea](javascript:alert(2))', config: {} },
        new AbortController().signal,
        () => undefined,
      );
      expect(JSON.stringify(draft)).not.toMatch(/<script|javascript:/i);
      expect(draft.title).toBe('Tips for [tea](#)');
    } finally {
      await app.close();
    }
  });

  it('provides the OpenAI-compatible adapters when configured, with the local delay from config', async () => {
    const config = loadConfig({ WRITER_PROVIDER: 'openai', WRITER_BASE_URL: 'http://127.0.0.1:9/v1', IMAGE_PROVIDER: 'local', LOCAL_PROVIDER_DELAY_MS: '100' });
    const app = await boot(config);
    try {
      expect(app.get<WriterProvider>(WRITER_PROVIDER).name).toBe('openai');
      const progress: number[] = [];
      await app.get<ImageProvider>(IMAGE_PROVIDER).generate({ prompt: 'x', aspectRatio: '1:1' }, new AbortController().signal, (f) => progress.push(f));
      expect(progress).toHaveLength(10);
    } finally {
      await app.close();
    }

    const images = await boot(loadConfig({ IMAGE_PROVIDER: 'openai', IMAGE_BASE_URL: 'http://127.0.0.1:9/v1' }));
    try {
      expect(images.get(IMAGE_PROVIDER)).toBeInstanceOf(OpenAiImageProvider);
    } finally {
      await images.close();
    }
  });
});
