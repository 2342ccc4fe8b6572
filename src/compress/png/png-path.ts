// PNG input through the row engine: decoded in rows (png/decoder.ts), resampled through a ring of rows
// when smaller output was asked (the engine's resampler, wasm/row-resizer.ts), turned upright (an eXIf orientation needs every
// row first), and written as PNG in rows or whole (png/writer.ts), as JPEG by the engine's encoder fed
// rows (a frame only for target_kb's retries), or as WebP into the engine's picture fed rows. The
// input's bytes are never returned as they are. A GIF's first frame takes the same way (`compressRows`,
// gif/gif-path.ts).
import { rowEncoded } from '../formats.ts';
import type { RgbaImage } from '../../../wasm/image.ts';
import { ApiError } from '../../errors.ts';
import type { Orientation } from '../exif.ts';
import type { OpaqueGuess, Plan } from '../memory-plan.ts';
import type { ImageMetadata, MetadataMode } from '../metadata.ts';
import { FULL_CHROMA_QUALITY } from '../limits.ts';
import { applyOrientation, flattenOntoWhite } from '../pixels.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { webpQualityArgument } from '../quality-scale.ts';
import { encodeAsRequested, encodeAsRequestedAsync } from '../target-size.ts';
import { resizeRow, type Timings } from '../timings.ts';
import { PngError, type Chunk } from './chunks.ts';
import { decodeRows, readPngInfo, type PngInfo } from './decoder.ts';
import { outputChunks, pngImageMetadata } from './metadata.ts';
import { jpegMarkersOf, packWebp } from '../webp-riff.ts';
import type { JpegMarker } from '../../../wasm/jpeg-engine.ts';
import { losslessLayout, paletteOf, writePng, type RowProducer } from './writer.ts';

const unprocessable = (message: string): ApiError =>
  new ApiError('unprocessable_image', `the PNG cannot be decoded: ${message}`, { param: 'image' });

export async function compressPng(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
): Promise<CompressResult> {
  return compressRows(request, plan, orientation, await pngRowInput(request.bytes, request.metadata ?? 'strip'));
}

/** A PNG as a row input (422 when its structure cannot be read). */
export async function pngRowInput(bytes: Uint8Array, metadata: MetadataMode): Promise<RowInput> {
  let png: PngInfo;
  try {
    png = readPngInfo(bytes);
  } catch (err) {
    if (err instanceof PngError) throw unprocessable(err.message);
    throw err;
  }
  return {
    format: 'png',
    width: png.width,
    height: png.height,
    hasAlpha: png.hasAlpha,
    grey: png.colourType === 0 || png.colourType === 4,
    palette: png.colourType === 3 ? png.palette : null,
    decodeRows: (onRow, options) => decodeRows(png, onRow, options),
    metadata: await pngImageMetadata(png.ancillary, metadata),
    chunksFor: (colourType) => outputChunks(png.ancillary, metadata, colourType),
  };
}

/**
 * An input decoded a row at a time: a PNG, a GIF's or an animated WebP's first frame (gif/gif-path.ts,
 * anim/webp-frames.ts) or an AVIF's picture (avif-input/avif-path.ts), whose rows go through the same
 * resampler and writers.
 */
export interface RowInput {
  format: 'png' | 'gif' | 'avif' | 'heic' | 'webp';
  width: number;
  height: number;
  hasAlpha: boolean;
  grey: boolean;
  /** A palette image's palette (RGBA entries): its indices (`decodeRows` with `indices`) pass through to PNG output when no pixel moves. */
  palette: Uint8Array | null;
  decodeRows(onRow: (row: Uint8Array) => void | Promise<void>, options: { indices?: boolean }): Promise<void>;
  /** What the output carries (ICC, EXIF, XMP as the metadata mode allows). */
  metadata: ImageMetadata;
  /** The PNG output's ancillary chunks for its colour type. */
  chunksFor(colourType: number): Promise<Chunk[]>;
}

/** Writes `info`'s rows as the request's format, by the plan. */
export async function compressRows(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  info: RowInput,
): Promise<CompressResult> {
  const timings: Timings = { decode: 0, resize: 0, encode: 0 };
  const started = performance.now();
  const source = (indices: boolean) => rowSource(info, plan, orientation, indices, timings);
  const finishTimings = () => {
    timings.decode = Math.max(0, performance.now() - started - timings.resize - timings.encode);
  };
  const { metadata } = info;
  try {
    if (plan.pngJpegRows) {
      const bytes = await jpegFromRows(
        source(false),
        plan.output.width,
        plan.output.height,
        info.hasAlpha,
        request.quality,
        jpegMarkersOf(metadata),
        timings,
        plan.streamRows === true,
      );
      finishTimings();
      return {
        bytes,
        inputFormat: info.format,
        format: 'jpeg',
        width: plan.output.width,
        height: plan.output.height,
        quality: request.quality,
        encodes: 1,
        lossless: false,
        timings,
      };
    }
    if (rowEncoded(request.format)) {
      const { encodeAvif } = await import('../avif-path.ts');
      const rows = { channels: 4, produce: source(false), metadata };
      return await encodeAvif(request, plan, info.format, plan.avifChannels ?? 4, rows, timings);
    }
    if (request.format === 'webp') {
      const encoded = await webpFromRows(source(false), plan, info.hasAlpha, request, timings);
      encoded.bytes = packWebp(encoded.bytes, metadata, plan.output.width, plan.output.height);
      finishTimings();
      return {
        ...encoded,
        inputFormat: info.format,
        format: 'webp',
        width: plan.output.width,
        height: plan.output.height,
        lossless: request.lossless === true,
        timings,
      };
    }
    if (request.format !== 'png') {
      const frame = await gather(source(false), plan.output.width, plan.output.height);
      if (request.format === 'jpeg' && info.hasAlpha) flattenOntoWhite(frame);
      const { encodeJpegFrame } = await import('../codecs.ts');
      const start = performance.now();
      const encoded = encodeAsRequested(
        (quality) => encodeJpegFrame(frame, quality, jpegMarkersOf(metadata)),
        request.quality,
        request.targetKb,
      );
      timings.encode += performance.now() - start;
      finishTimings();
      return {
        ...encoded,
        inputFormat: info.format,
        format: 'jpeg',
        width: frame.width,
        height: frame.height,
        lossless: false,
        timings,
      };
    }
    const { width, height } = plan.output;
    // Palette indices pass through when every pixel keeps its place and value.
    const passthrough = info.palette !== null && !plan.resized && orientation === 1;
    const layout = passthrough
      ? { width, height, colourType: 3 as const, palette: info.palette! }
      : losslessLayout(width, height, info.grey, info.hasAlpha);
    const output = await writePng({
      width,
      height,
      layout,
      produce: source,
      optimiseWhole: plan.pngWhole,
      palette: paletteOf(request),
      chunksFor: (colourType) => info.chunksFor(colourType),
      timing: timings,
    });
    finishTimings();
    return {
      bytes: output.bytes,
      inputFormat: info.format,
      format: 'png',
      width,
      height,
      quality: output.paletteQuality ?? 'lossless',
      encodes: output.encodes,
      lossless: output.paletteQuality === null && request.palette === true,
      timings,
    };
  } catch (err) {
    // A PNG's rows fail with PngError as they are decoded (a GIF's with GifError: gif/gif-path.ts).
    if (err instanceof PngError) throw unprocessable(err.message);
    throw err;
  }
}

/**
 * The output rows (upright, at the output size) of an input: decoded, resampled when the plan resizes,
 * gathered and turned when the orientation is not 1. Each call decodes again (the palette's second pass).
 */
export function rowSource(
  info: RowInput,
  plan: Plan,
  orientation: Orientation,
  indices: boolean,
  timings: Timings,
): RowProducer {
  return async (sink) => {
    const { stored } = plan;
    const resizer = plan.resized
      ? await engineResizer(info.width, info.height, stored.width, stored.height, info.hasAlpha)
      : null;
    const out = new Uint8Array(stored.width * 4);
    const frame = orientation === 1 ? null : new Uint8Array(stored.width * stored.height * 4);
    let y = 0;
    const emit = async (row: Uint8Array) => {
      if (frame) frame.set(row.subarray(0, stored.width * 4), y++ * stored.width * 4);
      else await sink(row);
    };
    let failed = true;
    try {
      await info.decodeRows(
        async (row) => {
          if (!resizer) return emit(row);
          await resizeRow(resizer, row, out, timings, emit);
        },
        { indices },
      );
      failed = false;
    } finally {
      resizer?.close(failed);
    }
    if (!frame) return;
    const start = performance.now();
    const upright = applyOrientation({ data: frame, width: stored.width, height: stored.height }, orientation);
    timings.resize += performance.now() - start;
    for (let r = 0; r < upright.height; r++)
      await sink(upright.data.subarray(r * upright.width * 4, (r + 1) * upright.width * 4));
  };
}

/** The engine's resampler (WebAssembly, loaded on first use like the other codecs). */
async function engineResizer(inW: number, inH: number, outW: number, outH: number, premultiply: boolean) {
  const { EngineRowResizer } = await import('../../../wasm/row-resizer.ts');
  return new EngineRowResizer(inW, inH, outW, outH, premultiply);
}

/** Rows handed to the JPEG engine at once: fewer calls, a small copy. */
const JPEG_ROW_BATCH = 32;

/**
 * The producer's RGBA rows as a JPEG written by the engine row by row (alpha flattened onto white), so
 * that only the encoder's state is held, never a frame.
 */
export async function jpegFromRows(
  produce: RowProducer,
  width: number,
  height: number,
  alpha: boolean,
  quality: number,
  markers: JpegMarker[],
  timings: Timings,
  /** Streamed with the standard tables (rows only), where the plan has no room for progressive's buffer. */
  stream = false,
): Promise<Uint8Array> {
  const { JpegRowEncoder } = await import('../../../wasm/jpeg-engine.ts');
  const encoder = new JpegRowEncoder(width, height, 3, {
    quality,
    sampling: quality >= FULL_CHROMA_QUALITY ? [1, 1] : [2, 2],
    progressive: !stream,
    stream,
    markers,
  });
  const batch = new Uint8Array(width * 3 * JPEG_ROW_BATCH);
  let rows = 0;
  const flush = () => {
    const start = performance.now();
    encoder.write(batch.subarray(0, rows * width * 3));
    timings.encode += performance.now() - start;
    rows = 0;
  };
  try {
    await produce((row) => {
      const out = rows * width * 3;
      if (alpha) {
        for (let x = 0, i = 0, o = out; x < width; x++, i += 4, o += 3) {
          const a = row[i + 3]!;
          // Over white: c·a + 255·(1 − a), rounded; ⌊t / 255⌋ as ((t + 1) · 257) >> 16, exact for every
          // c and a and cheaper than a division.
          const white = 255 * (255 - a) + 128;
          batch[o] = ((row[i]! * a + white) * 257) >>> 16;
          batch[o + 1] = ((row[i + 1]! * a + white) * 257) >>> 16;
          batch[o + 2] = ((row[i + 2]! * a + white) * 257) >>> 16;
        }
      } else rgbOf(row, width, batch, out);
      if (++rows === JPEG_ROW_BATCH) flush();
    });
    if (rows > 0) flush();
    const start = performance.now();
    const bytes = await encoder.finishGivingWay();
    timings.encode += performance.now() - start;
    return bytes;
  } catch (err) {
    encoder.abort();
    throw err;
  }
}

/** The first `width` RGBA pixels of `row` as RGB (alpha dropped), written into `batch` from `at`. */
function rgbOf(row: Uint8Array, width: number, batch: Uint8Array, at: number): void {
  for (let x = 0, i = 0, o = at; x < width; x++, i += 4, o += 3) {
    batch[o] = row[i]!;
    batch[o + 1] = row[i + 1]!;
    batch[o + 2] = row[i + 2]!;
  }
}

/**
 * The producer's RGBA rows into the engine's row-fed WebP encoder (RGB when the PNG has no alpha), its
 * picture YUV 4:2:0 (ARGB for lossless) and the only whole-image buffer; encoded as the plan says,
 * again for a size target.
 */
export async function webpFromRows(
  produce: RowProducer,
  plan: Plan,
  alpha: boolean,
  request: CompressRequest,
  timings: Timings,
) {
  const { WebpRowEncoder, WEBP_METHOD } = await import('../../../wasm/webp-engine.ts');
  const { width, height } = plan.output;
  const lossless = request.lossless === true;
  const { lowMemory, tokenGrowthBytes = 0, opaque } = plan.webp ?? { lowMemory: false };
  // Planned as opaque (a screenshot's RGBA): written without alpha, refused at its first transparent pixel.
  const channels = alpha && !opaque ? 4 : 3;
  const encoder = new WebpRowEncoder(width, height, channels, lossless);
  let failed = true;
  try {
    const batch = new Uint8Array(width * channels * JPEG_ROW_BATCH);
    let rows = 0;
    const flush = () => {
      const start = performance.now();
      encoder.write(batch.subarray(0, rows * width * channels));
      timings.encode += performance.now() - start;
      rows = 0;
    };
    await produce((row) => {
      if (opaque && alpha) refuseTransparency(row, width, plan, opaque);
      if (channels === 4) batch.set(row.subarray(0, width * 4), rows * width * 4);
      else rgbOf(row, width, batch, rows * width * 3);
      if (++rows === JPEG_ROW_BATCH) flush();
    });
    if (rows > 0) flush();
    const start = performance.now();
    const encoded = await encodeAsRequestedAsync(
      async (quality) =>
        (
          await encoder.encodeGivingWay(
            webpQualityArgument(quality, lossless),
            lossless,
            WEBP_METHOD,
            lowMemory,
            tokenGrowthBytes,
          )
        ).bytes,
      request.quality,
      request.targetKb,
    );
    timings.encode += performance.now() - start;
    failed = false;
    return lossless ? { ...encoded, quality: 'lossless' as const } : encoded;
  } finally {
    encoder.close(failed);
  }
}

/** 422 for a PNG planned as opaque whose row has a transparent pixel, saying what fits with its alpha. */
function refuseTransparency(row: Uint8Array, width: number, plan: Plan, guess: OpaqueGuess): void {
  for (let i = 3; i < width * 4; i += 4) {
    if (row[i] === 255) continue;
    const { width: w, height: h } = plan.output;
    const mb = (bytes: number) => `${Math.ceil(bytes / (1024 * 1024))} MB`;
    const advice = guess.maxWidth === null ? 'no output size fits' : `it fits with width=${guess.maxWidth} or less`;
    throw new ApiError(
      'image_too_large',
      `at ${w}×${h} this PNG has transparent pixels, and its WebP with alpha needs about ${mb(guess.alphaEstimate)}, ` +
        `more than the ${mb(guess.budget)} one compression may use; ${advice} (or ask for AVIF or PNG, which keep alpha in less memory)`,
      {
        param: 'image',
        details: { estimate_bytes: guess.alphaEstimate, budget_bytes: guess.budget, max_width: guess.maxWidth },
      },
    );
  }
}

/** The rows of a producer in one RGBA frame. */
export async function gather(produce: RowProducer, width: number, height: number): Promise<RgbaImage> {
  const data = new Uint8Array(width * height * 4);
  let y = 0;
  await produce((row) => {
    data.set(row.subarray(0, width * 4), y++ * width * 4);
  });
  return { data, width, height };
}
