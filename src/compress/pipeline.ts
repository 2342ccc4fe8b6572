// The compression pipeline, from uploaded bytes to encoded output. No HTTP here: the route reads the
// upload and writes the response. Phases run one after another and each codec gives its memory back
// when it grew (wasm/instances.ts), so a request's peak is its largest phase, not their sum.
import type { RgbaImage } from '../../wasm/image.ts';
import { ApiError } from '../http/errors.ts';
import { swapsAxes } from './exif.ts';
import { FORMAT_NAMES, sniff, type ImageFormat } from './formats.ts';
import { fitWithin, type Size } from './geometry.ts';
import { MalformedImage, readHeader } from './header.ts';
import { applyOrientation, flattenOntoWhite, hasTransparency } from './pixels.ts';
import { searchQuality } from './target-size.ts';

export interface CompressRequest {
  bytes: Uint8Array;
  format: ImageFormat;
  quality: number;
  width?: number;
  height?: number;
  targetKb?: number;
}

export interface CompressResult {
  bytes: Uint8Array;
  inputFormat: ImageFormat;
  format: ImageFormat;
  width: number;
  height: number;
  quality: number;
  /** Set when `targetKb` was given. */
  targetReached?: boolean;
  encodes: number;
  /** Whether the original bytes came back (the never-bigger rule). */
  original: boolean;
  /** Milliseconds per phase. */
  timings: { decode: number; resize: number; encode: number };
}

const unprocessable = (message: string): ApiError => new ApiError('unprocessable_image', message, { param: 'image' });

/** Checks what the file is and what it declares, before any decoding: type, structure, pixel count. */
function inspect(bytes: Uint8Array, maxInputPixels: number) {
  const sniffed = sniff(bytes);
  if (sniffed.format === null) {
    throw new ApiError('unsupported_media_type', `the image must be a JPEG, PNG or WebP file; this is ${sniffed.seen}`, { param: 'image' });
  }
  const format = sniffed.format;
  let header;
  try {
    header = readHeader(format, bytes);
  } catch (err) {
    if (err instanceof MalformedImage) throw unprocessable(`the ${FORMAT_NAMES[format]} cannot be read: ${err.message}`);
    throw err;
  }
  const pixels = header.width * header.height;
  if (pixels > maxInputPixels) {
    throw new ApiError(
      'image_too_large',
      `the image is ${header.width}×${header.height} (${(pixels / 1e6).toFixed(1)} megapixels); the limit is ${(maxInputPixels / 1e6).toFixed(1)} megapixels`,
      { param: 'image', details: { width: header.width, height: header.height, pixels, max_pixels: maxInputPixels } },
    );
  }
  if (header.defect) throw unprocessable(header.defect);
  return { format, header };
}

export async function compress(request: CompressRequest, maxInputPixels: number): Promise<CompressResult> {
  const { format: inputFormat, header } = inspect(request.bytes, maxInputPixels);
  const codecs = await import('./codecs.ts');
  const timings = { decode: 0, resize: 0, encode: 0 };
  const timed = <T>(phase: keyof typeof timings, work: () => T): T => {
    const start = performance.now();
    try {
      return work();
    } finally {
      timings[phase] += performance.now() - start;
    }
  };

  let image: RgbaImage = timed('decode', () => {
    try {
      return codecs.decode(inputFormat, request.bytes);
    } catch {
      throw unprocessable(`the ${FORMAT_NAMES[inputFormat]} could not be decoded: the file is corrupt or uses a feature we do not support`);
    }
  });
  if (image.width !== header.width || image.height !== header.height) {
    throw unprocessable(`the ${FORMAT_NAMES[inputFormat]} decodes to ${image.width}×${image.height} but declares ${header.width}×${header.height}`);
  }

  // Resize before turning upright: the smaller image is the cheaper one to rotate.
  const upright: Size = swapsAxes(header.orientation) ? { width: image.height, height: image.width } : image;
  const target = fitWithin(upright, { width: request.width, height: request.height });
  const resized = target !== upright;
  image = timed('resize', () => {
    let out = image;
    if (resized) {
      const stored = swapsAxes(header.orientation) ? { width: target.height, height: target.width } : target;
      const premultiply = header.hasAlphaChannel && hasTransparency(out);
      out = codecs.resize(out, stored.width, stored.height, premultiply);
    }
    out = applyOrientation(out, header.orientation);
    if (request.format === 'jpeg' && header.hasAlphaChannel) flattenOntoWhite(out);
    return out;
  });

  const encodeAt = (quality: number): Uint8Array => codecs.encode(request.format, image, quality);
  let encodes = 1;
  let quality = request.quality;
  let targetReached: boolean | undefined;
  let bytes = timed('encode', () => {
    if (request.targetKb === undefined) return encodeAt(quality);
    const found = searchQuality(encodeAt, request.targetKb * 1024, request.quality);
    encodes = found.encodes;
    quality = found.quality;
    targetReached = found.reached;
    return found.bytes;
  });

  // Never bigger: re-encoding to the same format at the same size must not cost the caller bytes.
  const original = request.format === inputFormat && !resized && request.targetKb === undefined && bytes.length >= request.bytes.length;
  if (original) bytes = request.bytes;
  return {
    bytes, inputFormat, format: request.format, width: image.width, height: image.height,
    quality, targetReached, encodes, original, timings,
  };
}
