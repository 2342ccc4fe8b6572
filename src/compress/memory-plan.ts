// What a compression will do and how much memory it will take, decided from the header and the
// parameters before any pixel is decoded. The estimate admits the request against the isolate's budget
// (memory-gate.ts); its parts follow the engine's allocations (docs/image-engine.md), and the bench checks
// them against workerd's measured peak (docs/benchmarks.md). Every input format's plan and estimate are
// kept in this one module (a little over 300 lines) because plan() and largestFittingWidth() choose
// between them: JPEG, WebP and PNG paths fall back on one another by what fits.
import { AVIF_DEPTH, avifPeakBytes } from '../../wasm/avif-settings.ts';
import { jxlPeakBytes, jxlTranscodeBytes } from './jxl/settings.ts';
import { swapsAxes } from './exif.ts';
import { type ImageFormat, type InputFormat, rowEncoded } from './formats.ts';
import { fitWithin, type Size } from './geometry.ts';
import type { ImageHeader } from './header.ts';
import { HISTOGRAM_BYTES } from './palette/quantise.ts';
import { FULL_CHROMA_QUALITY, MAX_OUTPUT_DIMENSION } from './limits.ts';
import { resizerBytes } from './resizer-memory.ts';
import { filterBytes } from './transform/filters.ts';
import { needsFrame, transformGeometry, type TransformGeometry } from './transform/geometry.ts';
import { DEFAULT_BACKGROUND, TRIM_BORDER, type Transform } from './transform/options.ts';

const MiB = 1024 * 1024;
/** A fresh engine instance and the JS of one request, whatever the image. */
export const REQUEST_BASE_BYTES = 4 * MiB;
/** libjpeg keeps DCT coefficients as 16-bit values: a progressive file's decoder and a progressive encoder hold all of them. */
const COEFFICIENT_BYTES = 2;
/** Decoder rows of a sequential JPEG per pixel of (scaled) width: an MCU row of every component and its context. */
const DECODER_BYTES_PER_COLUMN = 3 * 64;
/** Progressive output is chosen while its coefficient buffer stays under this; above, the two-pass baseline. */
export const PROGRESSIVE_MAX_BUFFER_BYTES = 48 * MiB;
/** Rows the streamed JPEG row encoder holds (an iMCU row of 4:2:0 and its batch), over three components. */
const STREAM_ENCODER_ROWS = 64;
/**
 * A vertical flip or a quarter turn whose whole frame does not fit gathers the content in bands, one
 * decoder pass each: at most this many passes (each decodes the whole source again), of at least
 * MIN_TURN_BAND_ROWS rows.
 */
export const MAX_TURN_PASSES = 8;
export const MIN_TURN_BAND_ROWS = 16;
/** Rows the JPEG engine's row reader hands over at once (wasm/row-batches.ts READ_BATCH), in its memory and in JavaScript's. */
const TURNED_READ_BATCH_ROWS = 2 * 32;
/** Whole-image codecs (oxipng, and the PNG writers fed a whole frame): bytes per pixel, measured (docs/image-engine.md). */
export const WHOLE_IMAGE_BYTES_PER_PIXEL = 16;

/**
 * The WebP engine (webp-path.ts), per pixel, from libwebp's allocations and checked against the
 * engine's measured peak (docs/image-engine.md, "Memory, measured"). Lossy input is decoded to YUV 4:2:0 (1.5 bytes), its
 * alpha to a plane in the output and one in the alpha decoder; lossless input to RGB(A) beside the
 * decoder's own ARGB pixels, which it needs whole (backward references reach any earlier pixel).
 */
const WEBP_LOSSY_DECODE_BYTES_PER_PIXEL = 1.5;
const WEBP_ALPHA_DECODE_BYTES_PER_PIXEL = 2;
const WEBP_LOSSLESS_DECODE_BYTES_PER_PIXEL = 4;
/** The VP8 decoder's caches of a macroblock row and its filter context, per input column. */
const WEBP_DECODER_BYTES_PER_COLUMN = 3 * 64;
/** The lossy encoder's picture: YUV 4:2:0, + 1 byte for alpha. */
const WEBP_LOSSY_PICTURE_BYTES_PER_PIXEL = 1.5;
/** What VP8's encoder holds besides the picture: analysis, and the token buffer of the whole image (measured 3.5). */
const WEBP_LOSSY_ENCODER_BYTES_PER_PIXEL = 3.75;
/**
 * The same in libwebp's low-memory mode, without the token buffer (about twice the encoding time): its
 * analysis and macroblock state, and WEBP_LOW_MEMORY_OUTPUT_COPIES of the output as it is written (the
 * partitions' bit writers, grown by doubling, and the chunks they are copied into), so the output's
 * share follows outputBytesPerPixel as the output buffers do. Measured on the engine fed rows as the
 * pipeline feeds it (`BENCH_AVIFDEC_WEBP=1 npx node test/bench/avifdec-memory.ts`, 2026-11-29): 0.24 a
 * pixel past the picture on 12 and 24 MP photos (whose outputs are 0.14 a pixel besides); on 12 MP of
 * noise the part past those 0.24 is 1.8 × the output at q80 (0.69 bytes a pixel: over
 * outputBytesPerPixel, as a noisy output's buffers are) and 2.5 × at q100; counted 0.3 and 3 × with a
 * margin. It was 2 a pixel whatever the quality: noise at q80, 6 times a photo's.
 */
const WEBP_LOW_MEMORY_ENCODER_BYTES_PER_PIXEL = 0.3;
const WEBP_LOW_MEMORY_OUTPUT_COPIES = 3;
/** Alpha is compressed losslessly (VP8L on the alpha plane): its ARGB copy, hash chain and references (measured 17). */
const WEBP_ALPHA_ENCODER_BYTES_PER_PIXEL = 18;
/** The lossless encoder: the ARGB picture and VP8L's hash chain, backward references and transforms (measured 36–39 in all). */
const WEBP_LOSSLESS_ENCODER_BYTES_PER_PIXEL = 40;
/**
 * Lossy WebP outputs larger than this use libwebp's token buffer only within WEBP_TOKEN_GROWTH_BYTES
 * (opaque ones; else, or past it, its low-memory mode: no token buffer, about 1.8 times the encode time
 * and 0.3 % more bytes in the median, up to 2 %).
 */
export const WEBP_TOKEN_BUFFER_MAX_PIXELS = 8_000_000;
/**
 * How far the engine's memory may grow while a large output's token buffer fills, past what decoding
 * and the picture left (docs/benchmarks.md, "WebP engine": the token buffer of a smooth 16.8 MP image fits in the
 * decoder's freed buffers; a noisy one needs about 50 MB more and is encoded again in low-memory mode).
 */
export const WEBP_TOKEN_GROWTH_BYTES = 4 * MiB;
/**
 * How far past a token-buffer allowance the engine's memory may be when the guard sees it, as a share
 * of the memory: the guard runs at libwebp's progress calls, between which the buffer grows by pages.
 * (The build now grows by exactly what is asked; this was the glue's fifth-at-a-time step, kept as
 * the margin.)
 */
const WASM_GROWTH_STEP = 0.2;
/**
 * PNG output is optimised whole by oxipng (every filter and colour type tried) only while that plan's
 * estimate stays within this share of the budget; otherwise the row encoder writes it in bounded
 * memory. oxipng holds the whole image and cannot be stopped part-way, so keeping it to half the
 * budget leaves the other half to a compression alongside (at the default 100 MB: outputs up to
 * about 1.3 MP, less with a large upload).
 */
export const PNG_WHOLE_BUDGET_SHARE = 0.5;
/** oxipng's peak per output pixel, the RGBA copy it is given included (measured 21.7 at 2.8 MP, 28 at 1 MP with its fixed part). */
const OXIPNG_BYTES_PER_PIXEL = 24;
/** The PNG engine's streams: the inflater's window and piece, the native deflater and its queue, row batches. */
const PNG_STREAM_BYTES = 2 * MiB;
/** The GIF decoder's fixed part: the LZW code table and stack (gif/lzw.ts, 16 KB) and two 256-entry colour tables, rounded up. */
const GIF_DECODER_BYTES = 64 * 1024;
/** The remapper's nearest-colour cache and dithering rows, on top of the histogram. */
const PALETTE_EXTRA_BYTES = MiB;

export type JpegEncodeMode = 'progressive' | 'two_pass';

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
  /** WebP output written lossless. */
  lossless?: boolean;
  /** False: plan a PNG with an alpha channel as it declares, never as opaque (the refusal's own search). */
  guessOpaque?: boolean;
  /** Fit, gravity, rotate, flip, background: planned by transformPlan (the transform path's rows). */
  transform?: Transform;
  /** False: an animation is written as its first frame even as WebP. */
  anim?: boolean;
}

/**
 * A PNG with an alpha channel planned as opaque (its WebP without libwebp's alpha encoder, 18 bytes a
 * pixel): screenshots declare RGBA and are opaque. The path checks every pixel as the rows pass and
 * refuses one with transparency before encoding, with what would fit with its alpha.
 */
export interface OpaqueGuess {
  /** The estimate with alpha, the budget it exceeds and the largest width at which it fits (null: none). */
  alphaEstimate: number;
  budget: number;
  maxWidth: number | null;
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
  /**
   * WebP output from a WebP: lossless (a lossless input, no target), libwebp's low-memory mode, and
   * how far the token buffer may grow the engine's memory before low-memory mode takes over (0: no bound).
   */
  webp?: { lossless: boolean; lowMemory: boolean; tokenGrowthBytes?: number; opaque?: OpaqueGuess };
  /** PNG output from PNG input: optimised whole by oxipng (true) or written in rows. */
  pngWhole: boolean;
  /** JPEG output from PNG input written from rows by the engine (the pixels never gathered into a frame). */
  pngJpegRows?: boolean;
  /** AVIF output: the channels of the encoder's picture (4 when the input has alpha). */
  avifChannels?: 3 | 4;
  /** AVIF output with intra block copy, its hash counted (a lossless input whose plan fits with it: avifScreenLike). */
  avifIntrabc?: boolean;
  /** AVIF output coded at 10 bits (AVIF_DEPTH) where its plan fits with it, else 8 (absent: 8). */
  avifDepth?: 8 | 10;
  /** A transformation's geometry (transform/path.ts runs it); `output` is its output, `stored` its resize. */
  transform?: TransformGeometry;
  /** JPEG written from rows (a transformation, or a row input's `pngJpegRows`): streamed with the standard tables, not progressive. */
  streamRows?: boolean;
  /**
   * A vertical flip or a quarter turn whose whole frame would not fit: the content's rows gathered this
   * many at a time, one pass of the decoder per band (transform/rows.ts).
   */
  turnBandRows?: number;
  /**
   * A transformed JPEG stored turned (EXIF 2–8) whose decoded image is smaller than the window it is
   * resized to (an enlargement): the engine turns it upright at this decoded size (as stored), before
   * the resampler, instead of turning a frame of the resized window (transform/path.ts).
   */
  turnBeforeResize?: Size;
  /** Estimated peak bytes of the whole request. */
  estimate: number;
}

/**
 * Output bytes per pixel assumed for the output buffers. Photos at quality 80 write 0.05–0.25; noise
 * writes more, and the budget's margin covers what an estimate cannot know before encoding.
 */
export const outputBytesPerPixel = (quality: number): number => (quality <= 85 ? 0.3 : quality <= 95 ? 0.6 : 1.2);

/**
 * The same for an enlargement by `scale` (the square root of the resized image's pixels over the
 * source's): its detail is the source's, spread over scale² as many pixels, while the edges that cost
 * bytes grow only about scale times longer; so below ENLARGED_OUTPUT_FULL_SCALE² it is taken as a
 * photo's, and past it as falling with √scale. Measured on camera photos (JPEG, 2026-11-29;
 * docs/experiments/transform.md): at quality 100, 1.08 bytes a pixel at scale 1.17 (this rule: 1.2),
 * 0.70 at 2.34 (0.86), 0.63 at 2.45 (0.84), 0.58 at 3.1 (0.75), 0.46 at 3.5 (0.70); at quality 80,
 * at most 0.12 from scale 1.8 up (0.24 or less).
 */
export const enlargedOutputBytesPerPixel = (quality: number, scale: number): number =>
  outputBytesPerPixel(quality) * Math.min(1, ENLARGED_OUTPUT_FULL_SCALE / Math.sqrt(Math.max(1, scale)));
/**
 * JPEG output per pixel of `fit=pad`'s background: a flat 8×8 block is a DC difference of 0 and an
 * end of block per component, 14 bits with the standard tables at 4:4:4 (0.027 bytes a pixel), 32
 * bits per 16×16 at 4:2:0, and the blocks the picture's edge cuts add a little. Measured, the padded
 * output less the unpadded one: 0.035 at q100 (300×50 padded to 1500×1500, transform-memory.test.ts),
 * 0.018 at q80 (the iPhone 4S padded to 6000×6000: 0.16 MB for 9 MP of background).
 */
export const PADDING_OUTPUT_BYTES_PER_PIXEL = 0.04;
/** Up to this scale² an enlargement's output is counted as a photo's of its size (enlargedOutputBytesPerPixel). */
const ENLARGED_OUTPUT_FULL_SCALE = 1.1;

/** The smallest DCT scale M/8 at which the decoded image still covers the wanted size. */
export function dctScale(input: Size, wanted: Size): number {
  for (let m = 1; m < 8; m++) {
    if (Math.ceil((input.width * m) / 8) >= wanted.width && Math.ceil((input.height * m) / 8) >= wanted.height)
      return m;
  }
  return 8;
}

/**
 * Plans the request. JPEG output takes the first encoder mode whose estimate fits `budget`: progressive
 * while its coefficient buffer is at most PROGRESSIVE_MAX_BUFFER_BYTES, then the two-pass baseline (rows only), whose estimate is returned even
 * when it does not fit (the caller refuses it).
 */
export function plan(
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  budget = Infinity,
): Plan {
  if (request.transform) return transformPlan(inputFormat, header, uploadBytes, request, budget);
  const upright: Size = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
  const output = fitWithin(upright, { width: request.width, height: request.height });
  const resized = output !== upright;
  const stored = swapsAxes(header.orientation) ? { width: output.height, height: output.width } : output;
  const scaleNum = inputFormat === 'jpeg' && resized ? dctScale(header, stored) : 8;
  // The never-bigger rewrite of the input: not when lossless output was asked for, which a lossy input's
  // own bytes are not.
  const lossless =
    (inputFormat === 'jpeg' || (inputFormat === 'webp' && !header.animation)) &&
    request.format === inputFormat &&
    !resized &&
    request.targetKb === undefined &&
    request.allowLossless !== false &&
    request.lossless !== true;
  const base = { output, resized, scaleNum, stored, lossless, pngWhole: false };
  if (request.format === 'jxl' && request.lossless) {
    // A JPEG's coefficients re-coded (jxl/jxl-path.ts transcodeJpeg): no pixels are decoded.
    const transcode = { ...base, mode: 'two_pass' as const };
    return { ...transcode, estimate: REQUEST_BASE_BYTES + jxlTranscodeBytes(header, uploadBytes) };
  }
  if (rowEncoded(request.format)) {
    // One way only: rows into the encoder's YUV picture (JPEG input has no alpha to keep).
    const avif = {
      ...base,
      mode: 'two_pass' as const,
      avifChannels: inputFormat === 'jpeg' ? 3 : avifChannelsOf(header),
    };
    if (request.format === 'avif' && avifScreenLike(inputFormat, header)) {
      const screen = { ...avif, avifIntrabc: true };
      const withHash = estimate(inputFormat, header, uploadBytes, request, screen);
      // Where the hash does not fit, the same encode without it: more bytes rather than a refusal.
      if (withHash <= budget) return { ...screen, estimate: withHash };
    }
    if (request.format === 'avif' && AVIF_DEPTH > 8) {
      const wide = { ...avif, avifDepth: AVIF_DEPTH };
      const withWide = estimate(inputFormat, header, uploadBytes, request, wide);
      // Where 10 bits do not fit, 8: more bytes rather than a refusal.
      if (withWide <= budget) return { ...wide, estimate: withWide };
    }
    return { ...avif, estimate: estimate(inputFormat, header, uploadBytes, request, avif) };
  }
  // A GIF's first frame and an AVIF's picture come as rows, as a PNG's do, into the same writers.
  if (rowInput(inputFormat, header) && request.format !== 'webp') {
    const pngBase = { ...base, mode: 'two_pass' as const };
    if (request.format === 'png') {
      const planned = {
        ...pngBase,
        pngWhole: true,
        estimate: pngEstimate(header, uploadBytes, request, { ...pngBase, pngWhole: true }),
      };
      if (planned.estimate <= budget * PNG_WHOLE_BUDGET_SHARE) return planned;
    }
    if (request.format === 'jpeg' && request.targetKb === undefined) {
      // The engine's encoder fed rows, holding only its coefficients (progressive): the pixels are never
      // gathered. Where the coefficients do not fit, streamed with the standard tables (rows only), as a
      // transformation's rows are: a few per cent more bytes rather than a refusal.
      const rows = { ...pngBase, pngJpegRows: true };
      const progressive = { ...rows, estimate: pngEstimate(header, uploadBytes, request, rows) };
      const coefficients = encoderBuffer(output, request.quality, header);
      if (coefficients <= PROGRESSIVE_MAX_BUFFER_BYTES && progressive.estimate <= budget) return progressive;
      const streamed = { ...rows, streamRows: true };
      return { ...streamed, estimate: pngEstimate(header, uploadBytes, request, streamed) };
    }
    return { ...pngBase, estimate: pngEstimate(header, uploadBytes, request, pngBase) };
  }
  if (request.format === 'webp') {
    // Lossless output for a lossless input when it fits; then lossy; then lossy in low memory. A large
    // opaque output tries the token buffer within an allowance first (alpha's own encoder would use it up).
    const big = output.width * output.height > WEBP_TOKEN_BUFFER_MAX_PIXELS;
    const alpha = inputFormat === 'webp' && header.hasAlphaChannel;
    // lossless=true asks for lossless output whatever the input is: no lossy fallback then.
    const variants: NonNullable<Plan['webp']>[] = request.lossless
      ? [{ lossless: true, lowMemory: false }]
      : [
          ...(inputFormat === 'webp' && header.webp?.lossless && request.targetKb === undefined
            ? [{ lossless: true, lowMemory: false }]
            : []),
          ...(!big
            ? [{ lossless: false, lowMemory: false }]
            : alpha
              ? []
              : [{ lossless: false, lowMemory: false, tokenGrowthBytes: WEBP_TOKEN_GROWTH_BYTES }]),
          { lossless: false, lowMemory: true },
        ];
    for (const webp of variants) {
      const planned = { ...base, mode: 'two_pass' as const, webp, estimate: 0 };
      planned.estimate =
        estimate(inputFormat, header, uploadBytes, request, planned) +
        animationBytes(inputFormat, header, uploadBytes, request, output);
      if (planned.estimate <= budget) return planned;
      if (webp !== variants.at(-1)) continue;
      if (inputFormat !== 'png' || !header.hasAlphaChannel || request.lossless || request.guessOpaque === false)
        return planned;
      const opaqueHeader = { ...header, hasAlphaChannel: false };
      for (const guess of variants) {
        const opaque = { ...base, mode: 'two_pass' as const, webp: guess, estimate: 0 };
        opaque.estimate = estimate(inputFormat, opaqueHeader, uploadBytes, request, opaque);
        if (opaque.estimate > budget) continue;
        const alphaRequest = { ...request, guessOpaque: false };
        const maxWidth = largestFittingWidth(inputFormat, header, uploadBytes, alphaRequest, budget);
        return { ...opaque, webp: { ...guess, opaque: { alphaEstimate: planned.estimate, budget, maxWidth } } };
      }
      return planned;
    }
  }
  if (request.format === 'png') {
    // JPEG or WebP rows: oxipng when its whole-image memory fits its share, else the row encoder.
    const whole = { ...base, mode: 'two_pass' as const, pngWhole: true, estimate: 0 };
    whole.estimate = estimate(inputFormat, header, uploadBytes, request, whole);
    if (whole.estimate <= budget * PNG_WHOLE_BUDGET_SHARE) return whole;
    const rows = { ...base, mode: 'two_pass' as const };
    return { ...rows, estimate: estimate(inputFormat, header, uploadBytes, request, rows) };
  }
  const modes: JpegEncodeMode[] = [];
  if (request.format === 'jpeg') {
    if (encoderBuffer(output, request.quality, header) <= PROGRESSIVE_MAX_BUFFER_BYTES) modes.push('progressive');
  }
  modes.push('two_pass');
  for (const mode of modes) {
    const planned = { ...base, mode, estimate: estimate(inputFormat, header, uploadBytes, request, { ...base, mode }) };
    if (planned.estimate <= budget || mode === 'two_pass') return planned;
  }
  throw new Error('unreachable: two_pass is always returned');
}

/**
 * The animated WebP's encoded frames and file, per byte of the GIF's LZW data scaled to the output's
 * pixels: libwebp keeps every encoded frame until the end and then assembles the file beside them (two
 * copies). Lossy frames of a GIF come out smaller than its LZW data; lossless ones at most about as
 * large; 2 covers both with room.
 */
export const ANIM_OUTPUT_BYTES_PER_UPLOAD_BYTE = 2;

/** Frames of an animation the file has (1 for a still): a GIF's, an animated WebP's, an AVIF sequence's. */
export const animationFrames = (inputFormat: InputFormat, header: ImageHeader): number =>
  inputFormat === 'gif' ? (header.gif?.frames ?? 1) : (header.animation?.frames ?? 1);

/**
 * Whether this request writes an animation as animated WebP (anim/anim-path.ts): WebP output, not
 * anim=false nor a size target; any other request takes the first frame.
 */
export const animates = (inputFormat: InputFormat, header: ImageHeader, request: PlanRequest): boolean =>
  animationFrames(inputFormat, header) > 1 &&
  request.format === 'webp' &&
  request.anim !== false &&
  request.targetKb === undefined;

/**
 * What animated WebP output holds beyond a still's rows (counted by `estimate`): the source's frames (a
 * GIF's composed screen and the rectangle a disposal-3 frame restores; an AVIF sequence's frame gathered
 * in JavaScript, twice when irot/imir turn it, and its decoder's reference pictures; an animated WebP's
 * decoder is the still rows' part, anim/memory.ts), the encoder's frame buffer and its three canvases
 * (wasm/src/sr_webp_anim.c, RGBA at the output size), and the encoded frames with the assembled file:
 * ANIM_OUTPUT_BYTES_PER_UPLOAD_BYTE of the upload scaled to the output, or for a WebP or AVIF source
 * (whose frames may be coded far tighter than WebP's) outputBytesPerPixel of every output frame (at
 * quality 100's for lossless output), if more. One frame's encode works within the still encoder's share
 * of the estimate, its picture being the frame's changed rectangle at most.
 */
function animationBytes(
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  output: Size,
): number {
  if (!animates(inputFormat, header, request)) return 0;
  const screen = header.width * header.height * 4;
  const frame = output.width * output.height * 4;
  const scale = Math.min(1, (output.width * output.height) / (header.width * header.height));
  const source =
    inputFormat === 'gif'
      ? 2 * screen
      : inputFormat === 'avif'
        ? screen * (header.orientation === 1 ? 1 : 2) + (header.animation?.decoderBytes ?? 0)
        : 0;
  const frames =
    inputFormat === 'gif'
      ? 0
      : animationFrames(inputFormat, header) *
        output.width *
        output.height *
        outputBytesPerPixel(request.lossless ? 100 : request.quality);
  return source + 4 * frame + Math.ceil(Math.max(uploadBytes * scale * ANIM_OUTPUT_BYTES_PER_UPLOAD_BYTE, frames));
}

const avifChannelsOf = (header: ImageHeader): 3 | 4 => (header.hasAlphaChannel ? 4 : 3);

/**
 * Inputs whose rows take the PNG path (png/png-path.ts `compressRows`): PNG, GIF, AVIF, HEIC and an
 * animated WebP's composed frames.
 */
const rowInput = (format: InputFormat, header: ImageHeader): boolean =>
  format === 'png' ||
  format === 'gif' ||
  format === 'avif' ||
  format === 'heic' ||
  (format === 'webp' && header.animation !== undefined);

/**
 * Inputs whose AVIF is encoded with intra block copy when its hash fits the plan (wasm/avif-settings.ts
 * AVIF_SCREEN_OPTIONS): the lossless ones (PNG, GIF, a still lossless WebP), where screenshots, text and
 * flat graphics come from; whether it is used is libaom's choice per cell, or the encoder's for a picture
 * that is mostly flat colour (AVIF_SCREEN_FLAT_SHARE). Camera pictures (JPEG, lossy WebP, HEIC, AVIF)
 * never are screen content, so their plans do not pay for the hash.
 */
const avifScreenLike = (format: InputFormat, header: ImageHeader): boolean =>
  format === 'png' || format === 'gif' || (format === 'webp' && header.webp?.lossless === true && !header.animation);

/**
 * The AVIF encoder's part (JPEG XL's alike, jxl/settings.ts jxlPeakBytes): its own instance
 * (wasm/avif-engine.ts) holding the picture, its output and libaom's working memory (avifPeakBytes), alive beside the decoder's rows, which stream into it; and
 * JavaScript's copy of the output.
 */
const avifEncoderBytes = (p: Omit<Plan, 'estimate'>, request: PlanRequest): number =>
  (request.format === 'jxl'
    ? jxlPeakBytes(p.output.width, p.output.height, p.avifChannels ?? 3)
    : avifPeakBytes(p.output.width, p.output.height, p.avifChannels ?? 3, p.avifIntrabc === true, p.avifDepth ?? 8)) +
  p.output.width * p.output.height * outputBytesPerPixel(request.quality);

/** Channels of the decoded pixels: grey JPEGs stay grey. */
const channelsOf = (header: ImageHeader): number => (header.jpeg?.components === 1 ? 1 : 3);

function encoderBuffer(output: Size, quality: number, header: ImageHeader): number {
  const samples = channelsOf(header) === 1 ? 1 : quality >= FULL_CHROMA_QUALITY ? 3 : 1.5;
  return COEFFICIENT_BYTES * output.width * output.height * samples;
}

function estimate(
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  p: Omit<Plan, 'estimate'>,
): number {
  const outPixels = p.output.width * p.output.height;
  const inPixels = header.width * header.height;
  // The upload as JS received it, plus the engine's copy.
  const input = uploadBytes * 2;
  // AVIF's are in its encoder's part (avifEncoderBytes).
  const outputBuffers = rowEncoded(request.format) ? 0 : outPixels * outputBytesPerPixel(request.quality) * 2;
  if (rowInput(inputFormat, header)) return pngEstimate(header, uploadBytes, request, p);
  if (inputFormat === 'webp')
    return Math.ceil(REQUEST_BASE_BYTES + input + webpEstimate(header, request, p) + outputBuffers);
  const channels = channelsOf(header);
  const frame = header.jpeg!;
  const scaledWidth = Math.ceil((header.width * p.scaleNum) / 8);
  const decoder = frame.progressive
    ? COEFFICIENT_BYTES * inPixels * frame.samplesPerPixel
    : scaledWidth * DECODER_BYTES_PER_COLUMN;
  const resampler = p.resized
    ? resizerBytes(scaledWidth, Math.ceil((header.height * p.scaleNum) / 8), p.stored.width, p.stored.height)
    : 0;
  if (request.format !== 'jpeg') {
    // Rows go to the WebP encoder's picture or the PNG writer; an orientation other than 1 keeps the
    // stored frame once. The engine's copy of the input is freed before the WebP encoder runs.
    const kept = header.orientation !== 1 ? outPixels * channels : 0;
    const decoding = decoder + resampler + kept;
    // The encoder writes its output into the engine while its state is alive; JavaScript's copy is made
    // after that state is freed, so the output counts once at the peak.
    if (request.format === 'webp')
      return Math.ceil(
        REQUEST_BASE_BYTES +
          uploadBytes +
          webpEncoderPeak(outPixels, false, p.webp, uploadBytes + decoding, request.quality) +
          outputBuffers / 2,
      );
    if (rowEncoded(request.format))
      return Math.ceil(REQUEST_BASE_BYTES + input + decoding + avifEncoderBytes(p, request));
    return Math.ceil(
      REQUEST_BASE_BYTES + input + decoding + pngWriterBytes(outPixels, outPixels * channels, request, p.pngWhole),
    );
  }
  // Orientations 3–8 and retries (target_kb) keep the output pixels.
  const kept = header.orientation >= 3 || request.targetKb !== undefined ? outPixels * channels : 0;
  const encoder = p.mode === 'progressive' ? encoderBuffer(p.output, request.quality, header) : p.output.width * 3 * 32;
  const lossyPhase = decoder + resampler + kept + encoder + outputBuffers;
  // The lossless rewrite runs after the lossy encode, holding its result: every coefficient, twice when
  // the orientation moves blocks, and its own output.
  const losslessPhase = p.lossless
    ? COEFFICIENT_BYTES * inPixels * frame.samplesPerPixel * (header.orientation >= 3 ? 2 : 1) +
      outputBuffers / 2 +
      uploadBytes * 2
    : 0;
  return Math.ceil(REQUEST_BASE_BYTES + input + Math.max(lossyPhase, losslessPhase));
}

/**
 * The WebP encoder's part of a request: its picture filled while `decoding` bytes are alive (the
 * decoder, resampler, a kept frame), then encoded after they are freed; the peak is the larger phase.
 */
function webpEncoderPeak(
  outPixels: number,
  alpha: boolean,
  variant: Plan['webp'],
  decoding: number,
  quality: number,
): number {
  const webp: NonNullable<Plan['webp']> = variant ?? { lossless: false, lowMemory: false };
  if (webp.lossless) return Math.max(decoding + outPixels * 4, outPixels * WEBP_LOSSLESS_ENCODER_BYTES_PER_PIXEL);
  const picture = outPixels * (WEBP_LOSSY_PICTURE_BYTES_PER_PIXEL + (alpha ? 1 : 0));
  const bounded = (webp.tokenGrowthBytes ?? 0) > 0;
  const internals =
    outPixels *
    (webp.lowMemory || bounded
      ? WEBP_LOW_MEMORY_ENCODER_BYTES_PER_PIXEL + WEBP_LOW_MEMORY_OUTPUT_COPIES * outputBytesPerPixel(quality)
      : WEBP_LOSSY_ENCODER_BYTES_PER_PIXEL);
  const alphaEncoder = alpha ? outPixels * WEBP_ALPHA_ENCODER_BYTES_PER_PIXEL : 0;
  const peak = Math.max(decoding + picture, picture + Math.max(internals, alphaEncoder));
  // A bounded token buffer: the low-memory peak, plus the growth allowed and one growth step past it.
  return bounded ? peak + webp.tokenGrowthBytes! + peak * WASM_GROWTH_STEP : peak;
}

/**
 * The PNG writer's part: the row encoder's streams and its output (joined once from its chunks, so
 * twice; both outputs of a palette pass), or oxipng's whole-image peak on a gathered RGBA frame.
 * `rawBytes` bounds the output (deflate of unfiltered rows adds almost nothing).
 */
function pngWriterBytes(outPixels: number, rawBytes: number, request: PlanRequest, whole: boolean): number {
  const palette = request.palette ? HISTOGRAM_BYTES + PALETTE_EXTRA_BYTES : 0;
  const outputs = (rawBytes + 64 * 1024) * 2 * (request.palette ? 2 : 1);
  return palette + outputs + (whole ? outPixels * (4 + OXIPNG_BYTES_PER_PIXEL) : PNG_STREAM_BYTES);
}

/** libwebp's decoder: the decoded picture (lossy: YUV and alpha planes; lossless: ARGB beside RGB(A)) and its caches. */
function webpDecoderBytes(header: ImageHeader): number {
  const inPixels = header.width * header.height;
  const alpha = header.hasAlphaChannel;
  return header.webp?.lossless === true
    ? inPixels * (WEBP_LOSSLESS_DECODE_BYTES_PER_PIXEL + (alpha ? 4 : 3))
    : inPixels * (WEBP_LOSSY_DECODE_BYTES_PER_PIXEL + (alpha ? WEBP_ALPHA_DECODE_BYTES_PER_PIXEL : 0)) +
        header.width * WEBP_DECODER_BYTES_PER_COLUMN;
}

/** The WebP engine's peak, past the upload: decoder and encoder are alive together (rows stream between them). */
function webpEstimate(header: ImageHeader, request: PlanRequest, p: Omit<Plan, 'estimate'>): number {
  const outPixels = p.output.width * p.output.height;
  const alpha = header.hasAlphaChannel;
  const channels = alpha && request.format !== 'jpeg' ? 4 : 3;
  const decoder = webpDecoderBytes(header);
  const resampler = p.resized ? resizerBytes(header.width, header.height, p.stored.width, p.stored.height) : 0;
  // Rows pulled into the AVIF, WebP or PNG encoder keep the stored output once for an orientation other than 1.
  const upright = header.orientation === 1 ? 0 : outPixels * channels;
  let encoder: number;
  if (rowEncoded(request.format)) {
    return decoder + resampler + upright + avifEncoderBytes(p, request);
  } else if (request.format === 'webp') {
    return webpEncoderPeak(outPixels, alpha, p.webp, decoder + resampler + upright, request.quality);
  } else if (request.format === 'jpeg') {
    const kept = header.orientation >= 3 || request.targetKb !== undefined ? outPixels * 3 : 0;
    encoder =
      kept + (p.mode === 'progressive' ? encoderBuffer(p.output, request.quality, header) : p.output.width * 3 * 32);
  } else {
    return decoder + resampler + upright + pngWriterBytes(outPixels, outPixels * channels, request, p.pngWhole);
  }
  return decoder + resampler + encoder;
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** The PNG row decoder's rows (input and output widths) and, interlaced, its samples. */
function pngDecoderBytes(
  header: ImageHeader,
  outWidth: number,
): { rows: number; deinterlace: number; gifIndices: number } {
  const frame = header.png ?? { bitDepth: 8, colourType: 6, interlaced: false };
  const channels = PNG_CHANNELS[frame.colourType] ?? 4;
  const sampleBytes = frame.bitDepth === 16 ? 2 : 1;
  return {
    rows: header.width * (channels * sampleBytes * 2 + 8) + outWidth * 8,
    deinterlace: frame.interlaced ? header.width * header.height * channels * sampleBytes : 0,
    // A GIF (no IHDR: planned as 8-bit RGBA rows): a row of the first frame's indices, and an interlaced
    // frame's visible indices, a byte each, held until its last pass. An AVIF: what its decoder holds
    // (avif-input/memory.ts).
    gifIndices: header.gif
      ? GIF_DECODER_BYTES + header.gif.rowBytes + header.gif.indexBytes
      : (header.avif?.decoderBytes ?? header.heic?.decoderBytes ?? header.animation?.decoderBytes ?? 0),
  };
}

/**
 * A PNG input's peak (a GIF's alike, its indices added): the upload as JavaScript received it and its parsed copy, rows of the input (or, interlaced, its samples at a byte each, two at 16 bits),
 * the resampler's ring, a frame at the output size when the orientation turns it or a whole-image
 * encoder takes it, and the output. A lossless PNG's size is not known before encoding: it is taken
 * as the upload's share for the output's pixels, half as much again, at least half a byte per pixel,
 * at most the raw pixels; the palette pass holds both outputs.
 */
function pngEstimate(
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  p: Omit<Plan, 'estimate'>,
): number {
  const inPixels = header.width * header.height;
  const outPixels = p.output.width * p.output.height;
  const { rows, deinterlace, gifIndices } = pngDecoderBytes(header, p.output.width);
  const resampler = p.resized ? resizerBytes(header.width, header.height, p.stored.width, p.stored.height) : 0;
  const turned = header.orientation !== 1 ? outPixels * 4 * 2 : 0;
  const palette = request.format === 'png' && request.palette ? HISTOGRAM_BYTES + PALETTE_EXTRA_BYTES : 0;
  const pngOutput =
    Math.min(outPixels * 4, Math.max((uploadBytes * outPixels * 1.5) / inPixels, outPixels / 2)) + 64 * 1024;
  let writer: number;
  if (request.format === 'png') {
    // Lossless and palette results are both held until the smaller is known; each is joined once from its chunks.
    const outputs = pngOutput * 2 * (palette ? 2 : 1);
    writer = p.pngWhole ? outPixels * (4 + OXIPNG_BYTES_PER_PIXEL) + outputs : PNG_STREAM_BYTES + outputs;
  } else if (rowEncoded(request.format)) {
    writer = avifEncoderBytes(p, request);
  } else if (p.pngJpegRows) {
    // Rows go straight into the engine's encoder, which holds the coefficients (progressive) or, streamed,
    // a few rows.
    writer = p.streamRows ? STREAM_ENCODER_ROWS * p.output.width * 3 : encoderBuffer(p.output, request.quality, header);
  } else if (request.format === 'jpeg') {
    // A frame for a size target's retries: RGBA in JS, its RGB copy, the engine's copy, the coefficients.
    writer = outPixels * (4 + 3 + 3) + encoderBuffer(p.output, request.quality, header);
  } else {
    // Rows fill the WebP encoder's picture (in batches: the decoder's rows are alive meanwhile).
    writer = webpEncoderPeak(outPixels, header.hasAlphaChannel, p.webp, 0, request.quality);
  }
  const outputBuffers =
    request.format === 'png' || rowEncoded(request.format) ? 0 : outPixels * outputBytesPerPixel(request.quality) * 2;
  return Math.ceil(
    REQUEST_BASE_BYTES +
      uploadBytes * 2 +
      PNG_STREAM_BYTES +
      rows +
      deinterlace +
      gifIndices +
      resampler +
      turned +
      palette +
      writer +
      outputBuffers,
  );
}

/**
 * A JPEG's gain map (gain-map/) is written after its picture, while the upload and the picture's output
 * are held: the request's peak is the larger of the picture's estimate and that phase, whose map part
 * is the map's own plan (`mapEstimate`, its request base and copies included).
 */
export function withGainMapEstimate(picture: Plan, uploadBytes: number, quality: number, mapEstimate: number): number {
  const pictureOutput = picture.output.width * picture.output.height * outputBytesPerPixel(quality);
  return Math.max(picture.estimate, Math.ceil(uploadBytes + pictureOutput + mapEstimate));
}

/**
 * The largest output width (upright) at which the request fits `budget`, or null when none does. The
 * estimate only grows with the width, so a binary search finds it.
 */
export function largestFittingWidth(
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  budget: number,
): number | null {
  const upright = swapsAxes(header.orientation) ? header.height : header.width;
  const fits = (width: number) =>
    plan(inputFormat, header, uploadBytes, { ...request, ...sizeAtWidth(request, width) }, budget).estimate <= budget;
  if (!fits(1)) return null;
  let lo = 1;
  // A transformation may enlarge (contain, cover, pad): the asked width bounds the search then. The
  // answer is a `width` to ask for, so never more than the parameter takes (a picture kept at its own
  // size can be wider).
  let hi = Math.min(MAX_OUTPUT_DIMENSION, Math.max(upright, request.transform ? (request.width ?? 0) : 0));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The size a search asks for at `width`: alone, or for a transformation that fills a box of its own,
 * with the height that keeps the box's proportions.
 */
export function sizeAtWidth(request: PlanRequest, width: number): { width: number; height?: number } {
  if (!request.transform || request.width === undefined || request.height === undefined)
    return { width, height: undefined };
  return { width, height: Math.max(1, Math.round((request.height * width) / request.width)) };
}

/**
 * A transformation's plan (transform/path.ts): the input's upright rows at the resized size, the row
 * transform (a frame of the output's content only for a vertical flip or a quarter turn), and the
 * output's row encoder: the JPEG engine's progressive row encoder (its coefficients), the WebP picture,
 * the PNG writer (oxipng within its share of the budget), the AVIF encoder. No lossless rewrite.
 */
function transformPlan(
  inputFormat: InputFormat,
  header: ImageHeader,
  uploadBytes: number,
  request: PlanRequest,
  budget: number,
): Plan {
  const t = request.transform!;
  const swap = swapsAxes(header.orientation);
  const upright: Size = swap ? { width: header.height, height: header.width } : header;
  const geometry = transformGeometry(upright, { ...t, width: request.width, height: request.height });
  const { output, resized: resize, content } = geometry;
  const resized = resize.width !== upright.width || resize.height !== upright.height;
  const stored = swap ? { width: resize.height, height: resize.width } : resize;
  const scaleNum = inputFormat === 'jpeg' && resized ? dctScale(header, stored) : 8;
  const padded = output.width !== content.width || output.height !== content.height;
  const alpha =
    request.format !== 'jpeg' &&
    ((inputFormat !== 'jpeg' && header.hasAlphaChannel) || (padded && (t.background ?? DEFAULT_BACKGROUND)[3] !== 255));
  const base: Omit<Plan, 'estimate'> = {
    output,
    resized,
    scaleNum,
    stored,
    mode: 'two_pass',
    lossless: false,
    pngWhole: false,
    transform: geometry,
    ...(rowEncoded(request.format) ? { avifChannels: alpha ? 4 : 3 } : {}),
  };
  const outPixels = output.width * output.height;
  const resizePixels = resize.width * resize.height;
  // Rows of the input engine, upright at the resized size (an EXIF turn keeps that size once).
  let decoding: number;
  if (inputFormat === 'jpeg') {
    const frame = header.jpeg!;
    const scaledWidth = Math.ceil((header.width * scaleNum) / 8);
    const decoder = frame.progressive
      ? COEFFICIENT_BYTES * header.width * header.height * frame.samplesPerPixel
      : scaledWidth * DECODER_BYTES_PER_COLUMN;
    const scaled = { width: scaledWidth, height: Math.ceil((header.height * scaleNum) / 8) };
    const resampler = resized ? resizerBytes(scaled.width, scaled.height, stored.width, stored.height) : 0;
    // An EXIF turn keeps a frame of what the rows are: the crop's window alone (path.ts), but all of
    // them for trim=border's first pass, which looks for the border in every row (trim.ts).
    const kept = t.trim === TRIM_BORDER ? resizePixels : geometry.crop.width * geometry.crop.height;
    decoding = decoder + resampler + (header.orientation !== 1 ? kept * channelsOf(header) : 0);
    // Or the turn comes first, on a frame of the decoded image, whose upright rows (RGBA, for the
    // resampler fed from outside the engine) are then resized: the smaller frame of the two. An
    // enlargement's decoded image is far smaller than its resized window (a 36 MP cover of an 8 MP
    // photo: 24 MB against 108 MB).
    if (header.orientation !== 1 && resized) {
      const up = swap ? { width: scaled.height, height: scaled.width } : scaled;
      const first =
        decoder +
        scaled.width * scaled.height * channelsOf(header) +
        up.width * (channelsOf(header) * TURNED_READ_BATCH_ROWS + 4 * 2) +
        resizerBytes(up.width, up.height, resize.width, resize.height);
      if (first < decoding) {
        decoding = first;
        base.turnBeforeResize = scaled;
      }
    }
  } else if (inputFormat === 'webp' && !header.animation) {
    const resampler = resized ? resizerBytes(header.width, header.height, stored.width, stored.height) : 0;
    const channels = header.hasAlphaChannel ? 4 : 3;
    decoding = webpDecoderBytes(header) + resampler + (header.orientation !== 1 ? resizePixels * channels : 0);
  } else {
    const { rows, deinterlace, gifIndices } = pngDecoderBytes(header, stored.width);
    const resampler = resized ? resizerBytes(header.width, header.height, stored.width, stored.height) : 0;
    const turned = header.orientation !== 1 ? resizePixels * 4 * 2 : 0;
    decoding = PNG_STREAM_BYTES + rows + deinterlace + gifIndices + resampler + turned;
  }
  // The transform's own rows, blur's and sharpen's windows of rows, and its frame when the rows turn or reverse.
  decoding += output.width * 4 * 3 + filterBytes(content.width, t);
  const frameBytes = needsFrame(t.flip, t.rotate) ? content.width * content.height * 4 : 0;
  const fixed = REQUEST_BASE_BYTES + uploadBytes * 2;
  // JPEG output of an enlargement writes less a pixel than a photo of its size, and its padding next to
  // nothing (measured).
  const scale = Math.sqrt(resizePixels / (upright.width * upright.height));
  const contentPixels = content.width * content.height;
  const outputBuffers =
    request.format === 'jpeg'
      ? (contentPixels * enlargedOutputBytesPerPixel(request.quality, scale) +
          (outPixels - contentPixels) * PADDING_OUTPUT_BYTES_PER_PIXEL) *
        2
      : outPixels * outputBytesPerPixel(request.quality) * 2;
  /**
   * The estimate `of` gives with the frame: whole when that fits, else in bands of the content's rows (a
   * decoder pass each, at most MAX_TURN_PASSES) that fit, else whole (over the budget: refused with the
   * size that fits).
   */
  const framed = (of: (frame: number) => number): { estimate: number; turnBandRows?: number } => {
    const whole = Math.ceil(of(frameBytes));
    if (frameBytes === 0 || whole <= budget) return { estimate: whole };
    const rowBytes = content.width * 4;
    const band = Math.min(content.height, Math.floor((budget - of(0)) / rowBytes));
    if (band < MIN_TURN_BAND_ROWS || Math.ceil(content.height / band) > MAX_TURN_PASSES) return { estimate: whole };
    const banded = Math.ceil(of(band * rowBytes));
    return banded <= budget ? { estimate: banded, turnBandRows: band } : { estimate: whole };
  };
  if (request.format === 'jpeg') {
    // The row encoder writes three components, whatever the input's: progressive with its coefficient
    // buffer where that fits and is at most PROGRESSIVE_MAX_BUFFER_BYTES (as without a transformation:
    // above it the engine's memory outgrew the plan, 503 on a 24 MP enlargement), else streamed with the
    // standard tables (rows only).
    const coefficients = encoderBuffer(output, request.quality, { ...header, jpeg: undefined });
    const progressive = framed((frame) => fixed + decoding + frame + coefficients + outputBuffers);
    if (coefficients <= PROGRESSIVE_MAX_BUFFER_BYTES && progressive.estimate <= budget)
      return { ...base, ...progressive };
    const rows = STREAM_ENCODER_ROWS * output.width * 3;
    return { ...base, streamRows: true, ...framed((frame) => fixed + decoding + frame + rows + outputBuffers) };
  }
  if (rowEncoded(request.format))
    return { ...base, ...framed((frame) => fixed + decoding + frame + avifEncoderBytes(base, request)) };
  if (request.format === 'png') {
    const rawBytes = outPixels * (alpha ? 4 : 3);
    const whole = framed((frame) => fixed + decoding + frame + pngWriterBytes(outPixels, rawBytes, request, true));
    if (whole.estimate <= budget * PNG_WHOLE_BUDGET_SHARE) return { ...base, pngWhole: true, ...whole };
    return {
      ...base,
      ...framed((frame) => fixed + decoding + frame + pngWriterBytes(outPixels, rawBytes, request, false)),
    };
  }
  // As without a transformation: a lossless WebP input stays lossless when that fits (no size target).
  const keepsLossless = inputFormat === 'webp' && header.webp?.lossless === true && request.targetKb === undefined;
  const variants: NonNullable<Plan['webp']>[] = request.lossless
    ? [{ lossless: true, lowMemory: false }]
    : [
        ...(keepsLossless ? [{ lossless: true, lowMemory: false }] : []),
        { lossless: false, lowMemory: false },
        { lossless: false, lowMemory: true },
      ];
  let planned: Plan | undefined;
  for (const webp of variants) {
    const estimated = framed(
      (frame) =>
        fixed +
        webpEncoderPeak(outPixels, alpha, webp, decoding + frame, request.quality) +
        outputBuffers / 2 +
        animationBytes(inputFormat, header, uploadBytes, request, output),
    );
    planned = { ...base, webp, ...estimated };
    if (estimated.estimate <= budget) break;
  }
  return planned!;
}
