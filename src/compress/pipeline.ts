// The compression pipeline, from uploaded bytes to encoded output. No HTTP here: the route reads the
// upload, asks `prepare` what the request will take (memory, from the header alone), admits it, and
// runs `compress`. JPEG input goes through the streaming engine (jpeg-path.ts); PNG and WebP inputs
// through the whole-image codecs, one phase after another, each giving its memory back when it grew
// (wasm/instances.ts).
import type { RgbaImage } from '../../wasm/image.ts';
import { ApiError } from '../http/errors.ts';
import { swapsAxes } from './exif.ts';
import { FORMAT_NAMES, sniff, type ImageFormat } from './formats.ts';
import { fitWithin, type Size } from './geometry.ts';
import { MalformedImage, readHeader, type ImageHeader } from './header.ts';
import type { MetadataMode } from './metadata.ts';
import { largestFittingWidth, plan, PNG_WHOLE_MAX_OUTPUT_PIXELS, type Plan } from './memory-plan.ts';
import { applyOrientation, flattenOntoWhite, hasTransparency } from './pixels.ts';
import { encodeAsRequested } from './target-size.ts';

export interface CompressRequest {
  bytes: Uint8Array;
  format: ImageFormat;
  quality: number;
  width?: number;
  height?: number;
  targetKb?: number;
  metadata?: MetadataMode;
  /** PNG output quantised to a palette of at most `colors` (the fewest that reach `quality`). */
  palette?: boolean;
  colors?: number;
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
  /** Whether the lossless rewrite replaced a lossy result that was not smaller (the never-bigger rule). */
  lossless: boolean;
  /** Milliseconds per phase. */
  timings: { decode: number; resize: number; encode: number };
}

/** A request checked and planned from its header, before any pixel is decoded. */
export interface Prepared {
  request: CompressRequest;
  inputFormat: ImageFormat;
  header: ImageHeader;
  plan: Plan;
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

/**
 * Checks the upload and plans the request; refuses with 422 `image_too_large` one that could never fit
 * the memory budget, saying the largest width that would.
 */
export function prepare(request: CompressRequest, maxInputPixels: number, memoryBudget: number): Prepared {
  const { format: inputFormat, header } = inspect(request.bytes, maxInputPixels);
  let planned = plan(inputFormat, header, request.bytes.length, request, memoryBudget);
  // Without the lossless fallback a large same-size JPEG may still fit: its lossy result is then kept.
  if (planned.estimate > memoryBudget && planned.lossless) planned = plan(inputFormat, header, request.bytes.length, { ...request, allowLossless: false }, memoryBudget);
  if (planned.estimate > memoryBudget) throw tooLargeForMemory(inputFormat, header, request, planned, memoryBudget);
  return { request, inputFormat, header, plan: planned };
}

const mb = (bytes: number): string => `${Math.ceil(bytes / (1024 * 1024))} MB`;

function tooLargeForMemory(inputFormat: ImageFormat, header: ImageHeader, request: CompressRequest, planned: Plan, budget: number): ApiError {
  const size = `${header.width}×${header.height}`;
  const needs = `needs about ${mb(planned.estimate)}, more than the ${mb(budget)} one compression may use`;
  if (inputFormat === 'webp') {
    return new ApiError('image_too_large', `this ${FORMAT_NAMES[inputFormat]} (${size}) is decoded whole and ${needs}; send a smaller image or a JPEG`, {
      param: 'image', details: { width: header.width, height: header.height, estimate_bytes: planned.estimate, budget_bytes: budget },
    });
  }
  const maxWidth = largestFittingWidth(inputFormat, header, request.bytes.length, { ...request, allowLossless: false }, budget);
  const advice = maxWidth === null ? 'no output size fits' : `it fits with width=${maxWidth} or less`;
  return new ApiError('image_too_large', `at ${planned.output.width}×${planned.output.height} this ${size} ${FORMAT_NAMES[inputFormat]} ${needs}; ${advice}`, {
    param: request.width !== undefined ? 'width' : 'image',
    details: { width: header.width, height: header.height, estimate_bytes: planned.estimate, budget_bytes: budget, max_width: maxWidth },
  });
}

export async function compress(prepared: Prepared): Promise<CompressResult> {
  const { request, inputFormat, header, plan: planned } = prepared;
  if (inputFormat === 'jpeg') {
    const { compressJpeg } = await import('./jpeg-path.ts');
    return compressJpeg(request, planned, header.orientation, request.metadata ?? 'strip');
  }
  if (inputFormat === 'png') {
    const { compressPng } = await import('./png/png-path.ts');
    return compressPng(request, planned, header.orientation);
  }
  return compressWhole(request, inputFormat, header);
}

/** WebP input: decoded whole, resized, turned upright, encoded (the WebP engine issue streams it). */
async function compressWhole(request: CompressRequest, inputFormat: 'webp', header: ImageHeader): Promise<CompressResult> {
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

  if (request.format === 'png') {
    const { paletteOf, writeFramePng } = await import('./png/writer.ts');
    const output = await writeFramePng(image, paletteOf(request), image.width * image.height <= PNG_WHOLE_MAX_OUTPUT_PIXELS, timings);
    return {
      bytes: output.bytes, inputFormat, format: 'png', width: image.width, height: image.height, quality: output.paletteQuality ?? request.quality,
      encodes: output.encodes, lossless: false, timings,
    };
  }
  const encoded = timed('encode', () => encodeAsRequested((quality) => codecs.encode(request.format, image, quality), request.quality, request.targetKb));
  // Never bigger, until the PNG and WebP engines re-pack losslessly: same format, same size, not smaller
  // gives the input's bytes back.
  const notSmaller = request.format === inputFormat && !resized && request.targetKb === undefined && encoded.bytes.length >= request.bytes.length;
  return {
    ...encoded, bytes: notSmaller ? request.bytes : encoded.bytes, inputFormat, format: request.format,
    width: image.width, height: image.height, lossless: false, timings,
  };
}
