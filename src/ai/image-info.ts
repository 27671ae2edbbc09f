/** Format and pixel size read from an encoded image's header. */
export interface ImageInfo {
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp';
  width: number;
  height: number;
}

/** Reads the header of a PNG, JPEG or WebP image; undefined for anything else or a truncated header. */
export function imageInfo(data: Buffer): ImageInfo | undefined {
  try {
    if (data.length >= 24 && data.readUInt32BE(0) === 0x89504e47 && data.readUInt32BE(4) === 0x0d0a1a0a && data.toString('latin1', 12, 16) === 'IHDR') {
      return sized('image/png', data.readUInt32BE(16), data.readUInt32BE(20));
    }
    if (data.length >= 4 && data[0] === 0xff && data[1] === 0xd8) return jpeg(data);
    if (data.length >= 30 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') return webp(data);
  } catch {
    // A read past the end: a truncated header.
  }
  return undefined;
}

function sized(mimeType: ImageInfo['mimeType'], width: number, height: number): ImageInfo | undefined {
  return width > 0 && height > 0 ? { mimeType, width, height } : undefined;
}

function jpeg(data: Buffer): ImageInfo | undefined {
  let i = 2;
  while (i + 9 < data.length) {
    if (data[i] !== 0xff) return undefined;
    const marker = data[i + 1];
    if (marker === 0xff) {
      i++;
      continue;
    }
    // SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return sized('image/jpeg', data.readUInt16BE(i + 7), data.readUInt16BE(i + 5));
    }
    i += 2 + data.readUInt16BE(i + 2);
  }
  return undefined;
}

function webp(data: Buffer): ImageInfo | undefined {
  const chunk = data.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return sized('image/webp', 1 + data.readUIntLE(24, 3), 1 + data.readUIntLE(27, 3));
  if (chunk === 'VP8 ') return sized('image/webp', data.readUInt16LE(26) & 0x3fff, data.readUInt16LE(28) & 0x3fff);
  if (chunk === 'VP8L') {
    const bits = data.readUInt32LE(21);
    return sized('image/webp', 1 + (bits & 0x3fff), 1 + ((bits >>> 14) & 0x3fff));
  }
  return undefined;
}
