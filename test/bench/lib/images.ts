// Images made for the bench, and sharp (native libvips) as the reference encoder.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { CORPUS_DIR } from './corpus.ts';
import { prng } from './prng.ts';

// Cold caches, one thread: every timed sharp call decodes and encodes from scratch, on one core like
// a Worker's WASM does; the machine's second core stays free for the service.
sharp.cache(false);
sharp.concurrency(1);

export type SharpVariant = 'mozjpeg' | 'jpeg' | 'webp' | 'png';

const ENCODERS: Record<SharpVariant, (img: Sharp) => Sharp> = {
  mozjpeg: (img) => img.flatten({ background: '#ffffff' }).jpeg({ quality: 80, mozjpeg: true }),
  jpeg: (img) => img.flatten({ background: '#ffffff' }).jpeg({ quality: 80 }),
  webp: (img) => img.webp({ quality: 80 }),
  png: (img) => img.png({ compressionLevel: 9, palette: false }),
};

export const SHARP_LABELS: Record<SharpVariant, string> = {
  mozjpeg: 'sharp jpeg({ quality: 80, mozjpeg: true })',
  jpeg: 'sharp jpeg({ quality: 80 })',
  webp: 'sharp webp({ quality: 80 })',
  png: 'sharp png({ compressionLevel: 9, palette: false })',
};

export interface SharpResult {
  bytes: number;
  ms: number;
  output: Buffer;
}

/** Decode, orient (as Shrinkray does), encode: the whole job, timed. */
export async function sharpEncode(input: Uint8Array, variant: SharpVariant): Promise<SharpResult> {
  const t0 = performance.now();
  const output = await ENCODERS[variant](sharp(input, { limitInputPixels: false }).rotate()).toBuffer();
  return { bytes: output.byteLength, ms: performance.now() - t0, output };
}

/** Width and height of a 3:2 image of about `megapixels`, both multiples of 16. */
export function dimensionsFor(megapixels: number): { width: number; height: number } {
  const width = Math.round(Math.sqrt(megapixels * 1e6 * 1.5) / 16) * 16;
  return { width, height: Math.round(width / 1.5 / 16) * 16 };
}

/**
 * Photo-like content: smooth colour gradients (sky, lighting), soft blobs (objects out of focus), a
 * high-frequency texture (foliage, fabric) and sensor noise. Codecs then work as hard as on a photo:
 * flat gradients alone compress to almost nothing, pure noise to almost nothing saved. JPEG q90 as a
 * camera or phone would write it. Cached under .corpus/synthetic/.
 */
export async function syntheticPhoto(
  megapixels: number,
): Promise<{ path: string; width: number; height: number; bytes: number }> {
  const { width, height } = dimensionsFor(megapixels);
  const dir = join(CORPUS_DIR, 'synthetic');
  const path = join(dir, `photo-${width}x${height}.jpg`);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    const rand = prng(width * 7919 + height);
    const blobs = Array.from({ length: 24 }, () => ({
      x: rand() * width,
      y: rand() * height,
      r: (0.05 + rand() * 0.2) * width,
      rgb: [rand(), rand(), rand()].map((v) => (v - 0.5) * 120),
    }));
    const data = Buffer.alloc(width * height * 3);
    const row = new Float64Array(width * 3);
    for (let y = 0; y < height; y++) {
      const v = y / height;
      for (let x = 0; x < width; x++) {
        const u = x / width;
        row[x * 3] = 90 + 110 * v + 30 * Math.sin(6 * u);
        row[x * 3 + 1] = 120 + 60 * Math.cos(4 * v + 2 * u);
        row[x * 3 + 2] = 200 - 120 * v + 20 * Math.sin(9 * u * v);
      }
      for (const b of blobs) {
        const dy = y - b.y;
        if (Math.abs(dy) > b.r) continue;
        const x0 = Math.max(0, Math.floor(b.x - b.r));
        const x1 = Math.min(width, Math.ceil(b.x + b.r));
        for (let x = x0; x < x1; x++) {
          const f = 1 - ((x - b.x) ** 2 + dy * dy) / (b.r * b.r);
          if (f > 0) for (let c = 0; c < 3; c++) row[x * 3 + c]! += b.rgb[c]! * f * f;
        }
      }
      for (let x = 0; x < width; x++) {
        // Texture strongest in the lower half (the "ground"), noise everywhere.
        const texture = v > 0.5 ? 18 * Math.sin(x * 0.9 + Math.sin(y * 0.7) * 3) * Math.sin(y * 1.3 + x * 0.05) : 0;
        const grain = (rand() - 0.5) * 14;
        for (let c = 0; c < 3; c++) {
          const value = row[x * 3 + c]! + texture + grain + (rand() - 0.5) * 4;
          data[(y * width + x) * 3 + c] = value < 0 ? 0 : value > 255 ? 255 : value;
        }
      }
    }
    writeFileSync(
      path,
      await sharp(data, { raw: { width, height, channels: 3 }, limitInputPixels: false })
        .jpeg({ quality: 90 })
        .toBuffer(),
    );
  }
  return { path, width, height, bytes: readFileSync(path).byteLength };
}
