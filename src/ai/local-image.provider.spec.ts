import { PNG } from 'pngjs';
import type { GeneratedImage, ImageRequest } from './ai.types.js';
import { LocalImageProvider, renderImage } from './local-image.provider.js';

const request: ImageRequest = { prompt: 'A cozy kitchen with cold brew jars, morning light', aspectRatio: '16:9', style: 'warm watercolor' };

// Rendering and decoding full-size images is the slow part of this file: do each once.
const renders = new Map<string, { image: GeneratedImage; png: PNG }>();
function rendered(req: ImageRequest): { image: GeneratedImage; png: PNG } {
  const key = JSON.stringify(req);
  if (!renders.has(key)) {
    const image = renderImage(req);
    renders.set(key, { image, png: PNG.sync.read(image.data) });
  }
  return renders.get(key)!;
}

/** Count of pure white pixels (the caption colour) in the bottom half. */
function whiteInBottomHalf(png: PNG): number {
  let count = 0;
  for (let y = png.height >> 1; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      const i = (y * png.width + x) * 4;
      if (png.data[i] === 255 && png.data[i + 1] === 255 && png.data[i + 2] === 255) count++;
    }
  }
  return count;
}

describe('renderImage (local image)', () => {
  it.each([
    ['1:1', 1024, 1024],
    ['16:9', 1280, 720],
    ['4:3', 1024, 768],
  ] as const)('renders a valid %s PNG of %ix%i', (aspectRatio, width, height) => {
    const { image, png } = rendered({ ...request, aspectRatio });
    expect(image.mimeType).toBe('image/png');
    expect(image.data.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect([image.width, image.height]).toEqual([width, height]);
    expect([png.width, png.height]).toEqual([width, height]);
  });

  it('is deterministic, with a palette from the style and a composition from the prompt', () => {
    const original = rendered(request);
    expect(renderImage({ ...request }).data.equals(original.image.data)).toBe(true);
    expect(renderImage({ ...request, prompt: 'Mountains at dusk' }).data.equals(original.image.data)).toBe(false);
    // Same prompt, other style: other colours nearly everywhere.
    const restyled = rendered({ ...request, style: 'neon cyberpunk' }).png;
    let differing = 0;
    for (let i = 0; i < original.png.data.length; i += 4) {
      if (original.png.data.readUIntBE(i, 3) !== restyled.data.readUIntBE(i, 3)) differing++;
    }
    expect(differing / (original.png.width * original.png.height)).toBeGreaterThan(0.5);
  });

  it('draws the prompt as a caption', () => {
    expect(whiteInBottomHalf(rendered(request).png)).toBeGreaterThan(500);
    // Nothing the font can draw: no caption, and no pure white anywhere.
    expect(whiteInBottomHalf(rendered({ ...request, prompt: '🙂 ✨' }).png)).toBe(0);
  });

  it('renders in well under a second', () => {
    const started = performance.now();
    renderImage({ ...request, aspectRatio: '1:1', prompt: 'timing' });
    // A loose guard against a pathological slowdown: shared CI cores are noisy.
    expect(performance.now() - started).toBeLessThan(1_500);
  });
});

describe('LocalImageProvider', () => {
  it('answers at once without a delay', async () => {
    const progress: number[] = [];
    const image = await new LocalImageProvider(0).generate(request, new AbortController().signal, (f) => progress.push(f));
    expect(image.data.equals(rendered(request).image.data)).toBe(true);
    expect(progress).toEqual([1]);
  });

  it('takes the configured delay in steps and stops promptly when aborted', async () => {
    const controller = new AbortController();
    const progress: number[] = [];
    let abortedAt = 0;
    const onProgress = (fraction: number) => {
      progress.push(fraction);
      if (progress.length === 2) {
        abortedAt = Date.now();
        controller.abort();
      }
    };
    await expect(new LocalImageProvider(1_000).generate(request, controller.signal, onProgress)).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - abortedAt).toBeLessThan(50);
    expect(progress).toEqual([0.1, 0.2]);
  });
});
