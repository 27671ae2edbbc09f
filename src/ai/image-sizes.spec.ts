import { ASPECT_RATIOS } from './ai.types.js';
import { acceptedImageSizes, formatImageSize, imageModelFamily, nearestImageSize, type ImageSize } from './image-sizes.js';

const parse = (list: string): ImageSize[] => list.split(',').map((s) => ({ width: Number(s.split('x')[0]), height: Number(s.split('x')[1]) }));
const chosen = (model: string | undefined, configured?: ImageSize[]) =>
  Object.fromEntries(ASPECT_RATIOS.map((ratio) => [ratio, formatImageSize(nearestImageSize(ratio, acceptedImageSizes(model, configured)))]));

describe('the image size asked per IMAGE_MODEL family and aspect ratio', () => {
  it.each([
    ['gpt-image-1', { '1:1': '1024x1024', '16:9': '1536x1024', '4:3': '1536x1024' }],
    ['gpt-image-1-mini', { '1:1': '1024x1024', '16:9': '1536x1024', '4:3': '1536x1024' }],
    ['GPT-Image-1.5', { '1:1': '1024x1024', '16:9': '1536x1024', '4:3': '1536x1024' }],
    ['dall-e-3', { '1:1': '1024x1024', '16:9': '1792x1024', '4:3': '1792x1024' }],
    // Squares only: the largest.
    ['dall-e-2', { '1:1': '1024x1024', '16:9': '1024x1024', '4:3': '1024x1024' }],
    // Another model, or none named, without IMAGE_SIZES: one size close to each ratio.
    ['sdxl-turbo', { '1:1': '1024x1024', '16:9': '1792x1024', '4:3': '1024x768' }],
    [undefined, { '1:1': '1024x1024', '16:9': '1792x1024', '4:3': '1024x768' }],
  ])('%s', (model, expected) => {
    expect(chosen(model)).toEqual(expected);
  });

  it('IMAGE_SIZES: the listed size of the same orientation whose aspect is nearest, for any model', () => {
    const sizes = parse('1024x1024,1344x768,1152x896,768x1344');
    expect(chosen('sdxl-turbo', sizes)).toEqual({ '1:1': '1024x1024', '16:9': '1344x768', '4:3': '1152x896' });
    // It wins over a family's list (a deployment whose model takes other sizes).
    expect(chosen('dall-e-3', parse('1024x1024,1280x720'))).toEqual({ '1:1': '1024x1024', '16:9': '1280x720', '4:3': '1280x720' });
  });

  it('keeps the orientation when the list has it, even when a square is nearer in aspect; falls back to the nearest otherwise', () => {
    // 4:3 is nearer to 1:1 than to 2:1, but a landscape ratio gets the landscape size.
    expect(formatImageSize(nearestImageSize('4:3', parse('1024x1024,2048x1024')))).toBe('2048x1024');
    // Only portraits and a square: a landscape ratio gets the square, the nearest.
    expect(formatImageSize(nearestImageSize('16:9', parse('1024x1536,1024x1024')))).toBe('1024x1024');
    // No square: 1:1 gets the nearest of the others (ties: the larger).
    expect(formatImageSize(nearestImageSize('1:1', parse('1536x1024,1024x1536,2048x3072')))).toBe('2048x3072');
  });

  it('a tie in aspect goes to the larger size', () => {
    expect(formatImageSize(nearestImageSize('1:1', parse('256x256,1024x1024,512x512')))).toBe('1024x1024');
  });

  it('names the family by prefix, in any case; other names have none', () => {
    expect(imageModelFamily('gpt-image-1')?.family).toBe('gpt-image');
    expect(imageModelFamily(' DALL-E-3 ')?.family).toBe('dall-e-3');
    expect(imageModelFamily('dall-e-2')?.takesResponseFormat).toBe(true);
    expect(imageModelFamily('gpt-image-1')?.takesResponseFormat).toBe(false);
    expect(imageModelFamily('stable-diffusion')).toBeUndefined();
    expect(imageModelFamily(undefined)).toBeUndefined();
  });
});
