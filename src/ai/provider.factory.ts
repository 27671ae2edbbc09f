import type { AppConfig, ProviderConfig } from '../config/config.js';
import type { ImageProvider, WriterProvider } from './ai.types.js';
import { LocalImageProvider } from './local-image.provider.js';
import { LocalWriterProvider } from './local-writer.provider.js';
import { OpenAiImageProvider } from './openai-image.provider.js';
import type { OpenAiProviderOptions } from './openai-http.client.js';
import { OpenAiWriterProvider } from './openai-writer.provider.js';
import { SanitizingWriterProvider } from './sanitizing-writer.provider.js';

type ProviderSettings = Pick<AppConfig, 'writer' | 'image' | 'localProviderDelayMs'>;

/** The configured writer, its output sanitized in this one place whichever provider it is. */
export function createWriterProvider(config: ProviderSettings): WriterProvider {
  const inner =
    config.writer.kind === 'openai' ? new OpenAiWriterProvider(openAiOptions(config.writer, 'WRITER')) : new LocalWriterProvider(config.localProviderDelayMs);
  return new SanitizingWriterProvider(inner);
}

/** The configured image provider. */
export function createImageProvider(config: ProviderSettings): ImageProvider {
  return config.image.kind === 'openai'
    ? new OpenAiImageProvider({ ...openAiOptions(config.image, 'IMAGE'), sizes: config.image.sizes })
    : new LocalImageProvider(config.localProviderDelayMs);
}

function openAiOptions(provider: ProviderConfig, prefix: string): OpenAiProviderOptions {
  if (!provider.baseUrl) throw new Error(`${prefix}_BASE_URL is required when ${prefix}_PROVIDER=openai.`);
  return { baseUrl: provider.baseUrl, apiKey: provider.apiKey, model: provider.model };
}
