import type { ImageRequest } from './ai.types.js';

/** A pixel size, as the images API's `size` (`WIDTHxHEIGHT`) names it. */
export interface ImageSize {
  width: number;
  height: number;
}

/** A family of image models by name prefix, with the only `size` values its images API accepts. */
export interface ImageModelFamily {
  family: string;
  prefix: string;
  sizes: readonly ImageSize[];
  /** Whether it takes `response_format` (the gpt-image models refuse it: they always answer base64). */
  takesResponseFormat: boolean;
}

const size = (width: number, height: number): ImageSize => ({ width, height });

/** OpenAI's image models and the sizes each accepts (its images API refuses any other with a 400). */
export const IMAGE_MODEL_FAMILIES: readonly ImageModelFamily[] = [
  { family: 'gpt-image', prefix: 'gpt-image', sizes: [size(1024, 1024), size(1536, 1024), size(1024, 1536)], takesResponseFormat: false },
  { family: 'dall-e-3', prefix: 'dall-e-3', sizes: [size(1024, 1024), size(1792, 1024), size(1024, 1792)], takesResponseFormat: true },
  { family: 'dall-e-2', prefix: 'dall-e-2', sizes: [size(256, 256), size(512, 512), size(1024, 1024)], takesResponseFormat: true },
];

/** Any other model, unless IMAGE_SIZES says what it accepts: one size per aspect ratio, close to it. */
export const OTHER_MODEL_SIZES: readonly ImageSize[] = [size(1024, 1024), size(1792, 1024), size(1024, 768)];

/** The family of an IMAGE_MODEL (by its name's prefix, any case); undefined for another model or none. */
export function imageModelFamily(model: string | undefined): ImageModelFamily | undefined {
  const name = model?.trim().toLowerCase() ?? '';
  return IMAGE_MODEL_FAMILIES.find((f) => name.startsWith(f.prefix));
}

/** The sizes to choose from: IMAGE_SIZES when set, else those of the model's family, else {@link OTHER_MODEL_SIZES}. */
export function acceptedImageSizes(model: string | undefined, configured?: readonly ImageSize[]): readonly ImageSize[] {
  return configured?.length ? configured : (imageModelFamily(model)?.sizes ?? OTHER_MODEL_SIZES);
}

const orientation = (s: ImageSize) => Math.sign(s.width - s.height);
const logAspect = (s: ImageSize) => Math.log(s.width / s.height);

/**
 * The size to ask for an aspect ratio: among the accepted sizes of the same orientation (square,
 * landscape, portrait; all of them when none has it), the one whose aspect is nearest, the larger
 * on a tie.
 */
export function nearestImageSize(aspectRatio: ImageRequest['aspectRatio'], sizes: readonly ImageSize[]): ImageSize {
  const [w, h] = aspectRatio.split(':').map(Number);
  const target = size(w, h);
  const same = sizes.filter((s) => orientation(s) === orientation(target));
  const pool = same.length ? same : sizes;
  const distance = (s: ImageSize) => Math.abs(logAspect(s) - logAspect(target));
  return pool.reduce((best, s) => {
    const d = distance(s) - distance(best);
    return d < -1e-9 || (Math.abs(d) <= 1e-9 && s.width * s.height > best.width * best.height) ? s : best;
  });
}

/** `1024x1024` */
export const formatImageSize = (s: ImageSize): string => `${s.width}x${s.height}`;
