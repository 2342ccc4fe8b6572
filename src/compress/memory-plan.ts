// What a compression will do and how much memory it will take, decided from the header and the
// parameters before any pixel is decoded. The estimate admits the request against the isolate's budget
// (memory-gate.ts); its parts follow the engine's allocations (wasm/README.md), and the bench checks
// them against workerd's measured peak (README, "Memory").
import { swapsAxes } from './exif.ts';
import type { ImageFormat } from './formats.ts';
import { fitWithin, type Size } from './geometry.ts';
import type { ImageHeader } from './header.ts';
import { HISTOGRAM_BYTES } from './palette/quantise.ts';
import { resizerBytes } from './png/resize-rows.ts';

const MiB = 1024 * 1024;
/** A fresh engine instance and the JS of one request, whatever the image. */
export const REQUEST_BASE_BYTES = 4 * MiB;
/** libjpeg keeps DCT coefficients as 16-bit values: a progressive file's decoder and a progressive encoder hold all of them. */
const COEFFICIENT_BYTES = 2;
/** Decoder rows of a sequential JPEG per pixel of (scaled) width: an MCU row of every component and its context. */
const DECODER_BYTES_PER_COLUMN = 3 * 64;
/** The resampler's ring: floats per channel, up to 16 rows of the output width. */
const RESAMPLER_BYTES_PER_COLUMN = 3 * 4 * 16;
/** Progressive output is chosen while its coefficient buffer stays under this; above, the two-pass baseline. */
export const PROGRESSIVE_MAX_BUFFER_BYTES = 48 * MiB;
/**
 * MozJPEG (whole-image, trellis) writes the output up to this size when its memory fits the budget:
 * about 20 bytes per output pixel, measured (README, "Memory"), for fewer bytes than the engine's own
 * encoder at equal SSIM.
 */
export const MOZJPEG_MAX_OUTPUT_PIXELS = 4_000_000;
const MOZJPEG_BYTES_PER_PIXEL = 20;
/** A fresh MozJPEG instance's memory (its module declares 259 pages), on top of its growth. */
const MOZJPEG_FRESH_BYTES = 259 * 64 * 1024;
/** Whole-image codecs (WebP, and JPEG input's PNG or WebP output): bytes per pixel, measured (README, "Memory"). */
const WHOLE_IMAGE_BYTES_PER_PIXEL = 16;
/**
 * PNG output up to this size is optimised whole by oxipng (every filter and colour type tried), whose
 * peak is about OXIPNG_BYTES_PER_PIXEL per output pixel; above, the row encoder writes it in bounded
 * memory. 3 MP keeps oxipng and the frame (about 72 MB) inside the default 100 MB budget with room for
 * a large upload; a request whose estimate does not fit goes to the row encoder instead.
 */
export const PNG_WHOLE_MAX_OUTPUT_PIXELS = 3_000_000;
const OXIPNG_BYTES_PER_PIXEL = 20;
/** The PNG engine's streams: the native inflater and deflater, their queues and row batches. */
const PNG_STREAM_BYTES = 2 * MiB;
/** The remapper's nearest-colour cache and dithering rows, on top of the histogram. */
const PALETTE_EXTRA_BYTES = MiB;

export type JpegEncodeMode = 'mozjpeg' | 'progressive' | 'two_pass';

export interface PlanRequest {
  format: ImageFormat;
  quality: number;
  width?: number;
  height?: number;
  targetKb?: number;
  /** False when the lossless rewrite would not fit: the lossy result is then kept even if larger. */
  allowLossless?: boolean;
  /** PNG output quantised to a palette. */
  palette?: boolean;
}

export interface Plan {
  /** The output size, upright. */
  output: Size;
  resized: boolean;
  /** JPEG input: decode at scaleNum/8 (DCT scaling), then resample to `stored` (the output before orientation). */
  scaleNum: number;
  stored: Size;
  /** JPEG output from a JPEG: the encoder's mode. */
  mode: JpegEncodeMode;
  /** Whether a lossless rewrite may follow the lossy encode (same format, same size, no target). */
  lossless: boolean;
  /** PNG output from PNG input: optimised whole by oxipng (true) or written in rows. */
  pngWhole: boolean;
  /** Estimated peak bytes of the whole request. */
  estimate: number;
}

/**
 * Output bytes per pixel assumed for the output buffers. Photos at quality 80 write 0.05–0.25; noise
 * writes more, and the budget's margin covers what an estimate cannot know before encoding.
 */
const outputBytesPerPixel = (quality: number): number => (quality <= 85 ? 0.3 : quality <= 95 ? 0.6 : 1.2);

/** The smallest DCT scale M/8 at which the decoded image still covers the wanted size. */
export function dctScale(input: Size, wanted: Size): number {
  for (let m = 1; m < 8; m++) {
    if (Math.ceil((input.width * m) / 8) >= wanted.width && Math.ceil((input.height * m) / 8) >= wanted.height) return m;
  }
  return 8;
}

/**
 * Plans the request. JPEG output takes the first encoder whose estimate fits `budget`: MozJPEG for
 * outputs up to MOZJPEG_MAX_OUTPUT_PIXELS, then progressive while its coefficient buffer is at most
 * PROGRESSIVE_MAX_BUFFER_BYTES, then the two-pass baseline (rows only), whose estimate is returned even
 * when it does not fit (the caller refuses it).
 */
export function plan(inputFormat: ImageFormat, header: ImageHeader, uploadBytes: number, request: PlanRequest, budget = Infinity): Plan {
  const upright: Size = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
  const output = fitWithin(upright, { width: request.width, height: request.height });
  const resized = output !== upright;
  const stored = swapsAxes(header.orientation) ? { width: output.height, height: output.width } : output;
  const scaleNum = inputFormat === 'jpeg' && resized ? dctScale(header, stored) : 8;
  const lossless = inputFormat === 'jpeg' && request.format === 'jpeg' && !resized && request.targetKb === undefined && request.allowLossless !== false;
  const base = { output, resized, scaleNum, stored, lossless, pngWhole: false };
  if (inputFormat === 'png') {
    const pngBase = { ...base, mode: 'two_pass' as const };
    const whole = request.format === 'png' && output.width * output.height <= PNG_WHOLE_MAX_OUTPUT_PIXELS;
    if (whole) {
      const planned = { ...pngBase, pngWhole: true, estimate: pngEstimate(header, uploadBytes, request, { ...pngBase, pngWhole: true }) };
      if (planned.estimate <= budget) return planned;
    }
    return { ...pngBase, estimate: pngEstimate(header, uploadBytes, request, pngBase) };
  }
  const modes: JpegEncodeMode[] = [];
  if (request.format === 'jpeg') {
    if (output.width * output.height <= MOZJPEG_MAX_OUTPUT_PIXELS) modes.push('mozjpeg');
    if (encoderBuffer(output, request.quality, header) <= PROGRESSIVE_MAX_BUFFER_BYTES) modes.push('progressive');
  }
  modes.push('two_pass');
  for (const mode of modes) {
    const planned = { ...base, mode, estimate: estimate(inputFormat, header, uploadBytes, request, { ...base, mode }) };
    if (planned.estimate <= budget || mode === 'two_pass') return planned;
  }
  throw new Error('unreachable: two_pass is always returned');
}

/** Channels of the decoded pixels: grey JPEGs stay grey. */
const channelsOf = (header: ImageHeader): number => (header.jpeg?.components === 1 ? 1 : 3);

function encoderBuffer(output: Size, quality: number, header: ImageHeader): number {
  const samples = channelsOf(header) === 1 ? 1 : quality >= 90 ? 3 : 1.5;
  return COEFFICIENT_BYTES * output.width * output.height * samples;
}

function estimate(inputFormat: ImageFormat, header: ImageHeader, uploadBytes: number, request: PlanRequest, p: Omit<Plan, 'estimate'>): number {
  const outPixels = p.output.width * p.output.height;
  const inPixels = header.width * header.height;
  // The upload as JS received it, plus the engine's copy.
  const input = uploadBytes * 2;
  const outputBuffers = outPixels * outputBytesPerPixel(request.quality) * 2;
  if (inputFormat !== 'jpeg') {
    return REQUEST_BASE_BYTES + input + (inPixels + outPixels) * WHOLE_IMAGE_BYTES_PER_PIXEL + outputBuffers;
  }
  const paletteBytes = request.format === 'png' && request.palette ? HISTOGRAM_BYTES + PALETTE_EXTRA_BYTES : 0;
  const channels = channelsOf(header);
  const frame = header.jpeg!;
  const scaledWidth = Math.ceil((header.width * p.scaleNum) / 8);
  const decoder = frame.progressive
    ? COEFFICIENT_BYTES * inPixels * frame.samplesPerPixel
    : scaledWidth * DECODER_BYTES_PER_COLUMN;
  const resampler = p.resized ? p.stored.width * RESAMPLER_BYTES_PER_COLUMN : 0;
  // Orientations 3–8 and retries (target_kb) keep the output pixels; PNG and WebP output takes them whole.
  const keepsFrame = header.orientation >= 3 || request.targetKb !== undefined || request.format !== 'jpeg' || p.mode === 'mozjpeg';
  const kept = keepsFrame ? outPixels * channels : 0;
  let encoder: number;
  if (request.format === 'jpeg' && p.mode === 'mozjpeg') encoder = MOZJPEG_FRESH_BYTES + outPixels * (channels + 4 + MOZJPEG_BYTES_PER_PIXEL);
  else if (request.format === 'jpeg') encoder = p.mode === 'progressive' ? encoderBuffer(p.output, request.quality, header) : p.output.width * 3 * 32;
  // A copy of the frame, its RGBA form, and the whole-image encoder.
  else encoder = outPixels * (channels + 4 + WHOLE_IMAGE_BYTES_PER_PIXEL) + paletteBytes;
  const lossyPhase = decoder + resampler + kept + encoder + outputBuffers;
  // The lossless rewrite runs after the lossy encode, holding its result: every coefficient, twice when
  // the orientation moves blocks, and its own output.
  const losslessPhase = p.lossless
    ? COEFFICIENT_BYTES * inPixels * frame.samplesPerPixel * (header.orientation >= 3 ? 2 : 1) + outputBuffers / 2 + uploadBytes * 2
    : 0;
  return Math.ceil(REQUEST_BASE_BYTES + input + Math.max(lossyPhase, losslessPhase));
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * A PNG input's peak: the upload as JavaScript received it and its parsed copy, rows of the input (or, interlaced, its samples at a byte each, two at 16 bits),
 * the resampler's ring, a frame at the output size when the orientation turns it or a whole-image
 * encoder takes it, and the output. A lossless PNG's size is not known before encoding: it is taken
 * as the upload's share for the output's pixels, half as much again, at least half a byte per pixel,
 * at most the raw pixels; the palette pass holds both outputs.
 */
function pngEstimate(header: ImageHeader, uploadBytes: number, request: PlanRequest, p: Omit<Plan, 'estimate'>): number {
  const frame = header.png ?? { bitDepth: 8, colourType: 6, interlaced: false };
  const channels = PNG_CHANNELS[frame.colourType] ?? 4;
  const sampleBytes = frame.bitDepth === 16 ? 2 : 1;
  const inPixels = header.width * header.height;
  const outPixels = p.output.width * p.output.height;
  const rows = header.width * (channels * sampleBytes * 2 + 8) + p.output.width * 8;
  const deinterlace = frame.interlaced ? inPixels * channels * sampleBytes : 0;
  const resampler = p.resized ? resizerBytes(header.width, header.height, p.stored.width, p.stored.height) : 0;
  const turned = header.orientation !== 1 ? outPixels * 4 * 2 : 0;
  const palette = request.format === 'png' && request.palette ? HISTOGRAM_BYTES + PALETTE_EXTRA_BYTES : 0;
  const pngOutput = Math.min(outPixels * 4, Math.max((uploadBytes * outPixels * 1.5) / inPixels, outPixels / 2)) + 64 * 1024;
  let writer: number;
  if (request.format === 'png') {
    // Lossless and palette results are both held until the smaller is known; each is joined once from its chunks.
    const outputs = pngOutput * 2 * (palette ? 2 : 1);
    writer = p.pngWhole ? outPixels * (4 + OXIPNG_BYTES_PER_PIXEL) + outputs : PNG_STREAM_BYTES + outputs;
  } else if (request.format === 'jpeg' && outPixels <= MOZJPEG_MAX_OUTPUT_PIXELS) {
    writer = outPixels * 4 + MOZJPEG_FRESH_BYTES + outPixels * (4 + MOZJPEG_BYTES_PER_PIXEL);
  } else {
    writer = outPixels * (4 + WHOLE_IMAGE_BYTES_PER_PIXEL);
  }
  const outputBuffers = request.format === 'png' ? 0 : outPixels * outputBytesPerPixel(request.quality) * 2;
  return Math.ceil(REQUEST_BASE_BYTES + uploadBytes * 2 + PNG_STREAM_BYTES + rows + deinterlace + resampler + turned + palette + writer + outputBuffers);
}

/**
 * The largest output width (upright) at which the request fits `budget`, or null when none does. The
 * estimate only grows with the width, so a binary search finds it.
 */
export function largestFittingWidth(inputFormat: ImageFormat, header: ImageHeader, uploadBytes: number, request: PlanRequest, budget: number): number | null {
  const upright = swapsAxes(header.orientation) ? header.height : header.width;
  const fits = (width: number) => plan(inputFormat, header, uploadBytes, { ...request, width, height: undefined }, budget).estimate <= budget;
  if (!fits(1)) return null;
  let lo = 1;
  let hi = upright;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
