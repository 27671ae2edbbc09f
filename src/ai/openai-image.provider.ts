import type { GeneratedImage, ImageProvider, ImageRequest, ProgressReporter } from './ai.types.js';
import { ProviderError } from './ai.types.js';
import { imageInfo } from './image-info.js';
import { acceptedImageSizes, formatImageSize, imageModelFamily, nearestImageSize, type ImageSize } from './image-sizes.js';
import { OpenAiHttpClient, type OpenAiProviderOptions } from './openai-http.client.js';

/**
 * Image generation over an OpenAI-compatible images API, answered inline as base64. The `size` asked
 * is one the model accepts (see image-sizes.ts: its family's, or IMAGE_SIZES), the nearest to the
 * aspect ratio; the answer's real size is read from the data.
 */
export class OpenAiImageProvider implements ImageProvider {
  readonly name = 'openai';
  private readonly client: OpenAiHttpClient;
  private readonly sizes: readonly ImageSize[];
  private readonly takesResponseFormat: boolean;

  constructor(private readonly options: OpenAiProviderOptions & { sizes?: readonly ImageSize[] }) {
    this.client = new OpenAiHttpClient('image', options);
    this.sizes = acceptedImageSizes(options.model, options.sizes);
    this.takesResponseFormat = imageModelFamily(options.model)?.takesResponseFormat ?? true;
  }

  async generate(req: ImageRequest, signal: AbortSignal, progress: ProgressReporter): Promise<GeneratedImage> {
    const body = {
      ...(this.options.model ? { model: this.options.model } : {}),
      prompt: req.style ? `${req.prompt}\n\nStyle: ${req.style}` : req.prompt,
      n: 1,
      size: formatImageSize(nearestImageSize(req.aspectRatio, this.sizes)),
      ...(this.takesResponseFormat ? { response_format: 'b64_json' } : {}),
    };
    const answer = await this.client.postJson('images/generations', body, signal);
    const image = parseImage(answer);
    progress(1);
    return image;
  }
}

/** Decodes the first image of an images-API answer and checks it really is an image. */
export function parseImage(answer: unknown): GeneratedImage {
  const first = (answer as { data?: { b64_json?: unknown; url?: unknown }[] })?.data?.[0];
  const b64 = first?.b64_json;
  if (typeof b64 !== 'string' || !b64.trim()) {
    const hint = typeof first?.url === 'string' ? ' (it sent a URL instead; it must support response_format "b64_json")' : '';
    throw new ProviderError(
      `The image provider answered without image data${hint}; call generate_image again, and if it keeps happening tell the user the image provider is misconfigured.`,
      false,
    );
  }
  const compact = b64.replace(/\s+/g, '');
  const data = /^[A-Za-z0-9+/]+={0,2}$/.test(compact) ? Buffer.from(compact, 'base64') : undefined;
  const info = data && imageInfo(data);
  if (!data || !info) {
    throw new ProviderError(
      'The image provider sent data that is not a PNG, JPEG or WebP image; call generate_image again, and if it keeps happening tell the user the image provider is misbehaving.',
      false,
    );
  }
  return { data, mimeType: info.mimeType, width: info.width, height: info.height };
}
