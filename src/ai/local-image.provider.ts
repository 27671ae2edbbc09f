import { PNG } from 'pngjs';
import { steppedDelay } from './abortable-delay.js';
import type { GeneratedImage, ImageProvider, ImageRequest, ProgressReporter } from './ai.types.js';
import { fontText, glyphRows, GLYPH_HEIGHT, GLYPH_WIDTH } from './bitmap-font.js';
import { hashString, seededRandom } from './seeded-random.js';

/** Pixel size of the local images per aspect ratio. */
export const LOCAL_IMAGE_SIZES: Record<ImageRequest['aspectRatio'], { width: number; height: number }> = {
  '1:1': { width: 1024, height: 1024 },
  '16:9': { width: 1280, height: 720 },
  '4:3': { width: 1024, height: 768 },
};

type Rgb = [number, number, number];

/** The offline image provider: a PNG whose palette comes from the style and whose composition and caption come from the prompt. */
export class LocalImageProvider implements ImageProvider {
  readonly name = 'local';

  constructor(private readonly delayMs = 0) {}

  async generate(req: ImageRequest, signal: AbortSignal, progress: ProgressReporter): Promise<GeneratedImage> {
    signal.throwIfAborted();
    const image = renderImage(req);
    await steppedDelay(this.delayMs, signal, progress);
    if (this.delayMs <= 0) progress(1);
    return image;
  }
}

/** Renders the local PNG; the same request always gives the same bytes. */
export function renderImage(req: ImageRequest): GeneratedImage {
  const { width, height } = LOCAL_IMAGE_SIZES[req.aspectRatio] ?? LOCAL_IMAGE_SIZES['1:1'];
  const canvas = new Canvas(width, height);
  const palette = paletteOf(req.style ?? '');
  const random = seededRandom(hashString(req.prompt));

  // Background: a linear gradient at an angle chosen by the prompt.
  const angle = random() * Math.PI * 2;
  const dx = Math.cos(angle);
  const dy = Math.sin(angle);
  const span = Math.abs(dx) * width + Math.abs(dy) * height;
  const offset = Math.min(0, dx * width) + Math.min(0, dy * height);
  const [from, to] = palette;
  const pixels = canvas.data;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i += 3) {
      const t = (x * dx + y * dy - offset) / span;
      pixels[i] = from[0] + (to[0] - from[0]) * t;
      pixels[i + 1] = from[1] + (to[1] - from[1]) * t;
      pixels[i + 2] = from[2] + (to[2] - from[2]) * t;
    }
  }

  // Geometry: discs, rings and bands placed by the prompt, coloured from the style.
  const unit = Math.min(width, height);
  const shapes = 4 + Math.floor(random() * 4);
  for (let i = 0; i < shapes; i++) {
    const color = palette[2 + (i % 3)];
    const alpha = 0.25 + random() * 0.35;
    const cx = random() * width;
    const cy = random() * height * 0.75;
    const r = unit * (0.08 + random() * 0.3);
    const kind = Math.floor(random() * 3);
    if (kind === 0) canvas.ring(cx, cy, 0, r, color, alpha);
    else if (kind === 1) canvas.ring(cx, cy, r * 0.7, r, color, alpha);
    else canvas.band(cy, r * 0.4, (random() - 0.5) * 0.8, color, alpha);
  }

  drawCaption(canvas, fontText(req.prompt));
  const png = new PNG({ width, height });
  png.data = canvas.data;
  // RGB in and out, one fixed filter and a middling deflate level: several times faster than pngjs defaults.
  const data = PNG.sync.write(png, { colorType: 2, inputColorType: 2, inputHasAlpha: false, filterType: 1, deflateLevel: 6 });
  return { data, mimeType: 'image/png', width, height };
}

/** Caption at the bottom: up to 3 wrapped lines of the prompt on a darkened strip. */
function drawCaption(canvas: Canvas, text: string): void {
  if (!text) return;
  const { width, height } = canvas;
  const scale = Math.max(2, Math.round(width / 220));
  const advance = (GLYPH_WIDTH + 1) * scale;
  const lineHeight = (GLYPH_HEIGHT + 4) * scale;
  const margin = Math.round(width * 0.06);
  const perLine = Math.max(1, Math.floor((width - 2 * margin) / advance));
  const lines = wrap(text, perLine, 3);
  const top = height - margin - lines.length * lineHeight;
  canvas.shade(top - 2 * scale, height, 0.45);
  lines.forEach((line, i) => {
    const y = top + i * lineHeight + scale;
    drawText(canvas, line, margin + Math.round(scale / 2), y + Math.round(scale / 2), scale, [0, 0, 0]);
    drawText(canvas, line, margin, y, scale, [255, 255, 255]);
  });
}

function drawText(canvas: Canvas, line: string, left: number, top: number, scale: number, color: Rgb): void {
  [...line].forEach((char, i) => {
    const rows = glyphRows(char);
    if (!rows) return;
    const x0 = left + i * (GLYPH_WIDTH + 1) * scale;
    rows.forEach((bits, row) => {
      for (let col = 0; col < GLYPH_WIDTH; col++) {
        if (bits & (1 << (GLYPH_WIDTH - 1 - col))) canvas.fill(x0 + col * scale, top + row * scale, scale, scale, color);
      }
    });
  });
}

function wrap(text: string, perLine: number, maxLines: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    const piece = word.length > perLine ? word.slice(0, perLine) : word;
    if (!current) current = piece;
    else if (current.length + 1 + piece.length <= perLine) current += ` ${piece}`;
    else {
      lines.push(current);
      current = piece;
    }
  }
  if (current) lines.push(current);
  if (lines.length > maxLines) {
    const last = lines[maxLines - 1];
    lines.length = maxLines;
    lines[maxLines - 1] = `${last.slice(0, perLine - 3)}...`;
  }
  return lines;
}

/** Five colours from the style text: two background tones and three accents in a scheme picked by the hash. */
function paletteOf(style: string): Rgb[] {
  const h = hashString(style.trim().toLowerCase());
  const hue = h % 360;
  const [a, b] = [
    [30, 60],
    [180, 200],
    [120, 240],
    [150, 210],
  ][(h >>> 9) % 4];
  const sat = 0.45 + ((h >>> 12) % 40) / 100;
  const light = 0.3 + ((h >>> 18) % 20) / 100;
  return [hsl(hue, sat, light), hsl(hue + a, sat, light + 0.2), hsl(hue + b, sat + 0.1, 0.6), hsl(hue + a / 2, sat, 0.75), hsl(hue + b + 20, sat, 0.45)];
}

function hsl(hue: number, s: number, l: number): Rgb {
  const sat = Math.min(1, s);
  const k = (n: number) => (n + hue / 30) % 12;
  const a = sat * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

/** An RGB pixel buffer with the few drawing operations the composition needs. */
class Canvas {
  readonly data: Buffer;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.data = Buffer.alloc(width * height * 3);
  }

  set(x: number, y: number, [r, g, b]: Rgb): void {
    const i = (y * this.width + x) * 3;
    this.data[i] = r;
    this.data[i + 1] = g;
    this.data[i + 2] = b;
  }

  fill(x0: number, y0: number, w: number, h: number, color: Rgb): void {
    for (let y = Math.max(0, y0); y < Math.min(this.height, y0 + h); y++) {
      for (let x = Math.max(0, x0); x < Math.min(this.width, x0 + w); x++) this.set(x, y, color);
    }
  }

  /** A disc (inner 0) or ring between two radii, filled row span by row span. */
  ring(cx: number, cy: number, inner: number, outer: number, color: Rgb, alpha: number): void {
    const yMax = Math.min(this.height - 1, Math.floor(cy + outer));
    for (let y = Math.max(0, Math.ceil(cy - outer)); y <= yMax; y++) {
      const dy2 = (y - cy) ** 2;
      const xo = Math.sqrt(outer * outer - dy2);
      const xi = dy2 < inner * inner ? Math.sqrt(inner * inner - dy2) : -1;
      if (xi < 0) this.span(y, cx - xo, cx + xo, color, alpha);
      else {
        this.span(y, cx - xo, cx - xi, color, alpha);
        this.span(y, cx + xi, cx + xo, color, alpha);
      }
    }
  }

  /** Blends the pixels of row `y` from x0 to x1. */
  private span(y: number, x0: number, x1: number, [r, g, b]: Rgb, alpha: number): void {
    const d = this.data;
    const end = (y * this.width + Math.min(this.width - 1, Math.floor(x1))) * 3;
    for (let i = (y * this.width + Math.max(0, Math.ceil(x0))) * 3; i <= end; i += 3) {
      d[i] += (r - d[i]) * alpha;
      d[i + 1] += (g - d[i + 1]) * alpha;
      d[i + 2] += (b - d[i + 2]) * alpha;
    }
  }

  /** A straight band across the whole width, centred on `cy` at x = 0 and rising by `slope`; drawn row by row. */
  band(cy: number, half: number, slope: number, color: Rgb, alpha: number): void {
    for (let y = 0; y < this.height; y++) {
      if (slope === 0) {
        if (Math.abs(y - cy) <= half) this.span(y, 0, this.width - 1, color, alpha);
        continue;
      }
      const a = (y - half - cy) / slope;
      const b = (y + half - cy) / slope;
      this.span(y, Math.min(a, b), Math.max(a, b), color, alpha);
    }
  }

  /** Darkens the rows from `top` to `bottom` (exclusive). */
  shade(top: number, bottom: number, amount: number): void {
    const start = Math.max(0, top) * this.width * 3;
    const end = Math.min(this.height, bottom) * this.width * 3;
    for (let i = start; i < end; i++) this.data[i] = this.data[i] * (1 - amount);
  }
}
