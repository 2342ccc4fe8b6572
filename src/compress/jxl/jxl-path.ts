// JPEG XL output. Lossy: the input's upright rows (the same sources AVIF output reads, avif-path.ts) go
// into the JXL encoder (wasm/jxl-engine.ts), in its own module, which holds them as 8-bit RGB(A) and
// encodes them through libjxl's chunked-frame API at the mapped distance. The input's ICC profile is kept
// (its rows are in that profile's colours); EXIF and XMP, with metadata=keep only and their orientation
// reset as for the other outputs (the source's metadata), go in Exif and xml boxes. Lossless: a JPEG's own
// coefficients re-coded, with what rebuilds the JPEG byte for byte (transcodeJpeg): the upload under
// metadata=keep, the upload without its metadata under strip (strip.ts).
import { encodeRows, type RowSource } from '../row-source.ts';
import { type EngineInput, inEngine } from '../engine-errors.ts';
import { FORMAT_NAMES, type InputFormat } from '../formats.ts';
import type { Plan } from '../memory-plan.ts';
import { encoderQuality } from '../quality-scale.ts';
import type { Timings } from '../timings.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import type { GainMapSource } from '../gain-map/detect.ts';
import type { ImageHeader } from '../header.ts';
import { losslessRefused } from './rules.ts';
import { JXL_EFFORT, JXL_LOSSLESS_EFFORT } from './settings.ts';
import { strippedForTranscode } from './strip.ts';

/** Encodes `source` as the plan's lossy JXL with `channels` (the plan's avifChannels); the encoder is closed however encoding ends. */
export async function encodeJxl(
  request: CompressRequest,
  plan: Plan,
  inputFormat: InputFormat,
  channels: 3 | 4,
  source: RowSource,
  timings: Timings,
): Promise<CompressResult> {
  const { JxlRowEncoder } = await import('../../../wasm/jxl-engine.ts');
  const { width, height } = plan.output;
  const input = FORMAT_NAMES[inputFormat] as EngineInput;
  const encoded = await encodeRows(input, request, width, channels, source, timings, {
    open: () => new JxlRowEncoder(width, height, channels),
    setUp: (encoder) => encoder.setMetadata(source.metadata),
    encode: async (encoder, quality) => encoder.encode(encoderQuality('jxl', quality), JXL_EFFORT),
  });
  return { ...encoded, inputFormat, format: 'jxl', width, height, lossless: false, timings };
}

/**
 * A JPEG's coefficients as a lossless JXL (format=jxl&lossless=true): the pixels are the JPEG's own, and
 * djxl rebuilds the JPEG libjxl was given byte for byte: the upload with metadata=keep; under strip, the
 * upload without its metadata (strip.ts). A JPEG libjxl cannot rebuild is refused with 422 and libjxl's reason.
 */
export async function transcodeJpeg(
  request: CompressRequest,
  plan: Plan,
  header: ImageHeader,
  gainMap: GainMapSource | undefined,
): Promise<CompressResult> {
  const { jpegToLosslessJxl, JxlJpegRefusedError } = await import('../../../wasm/jxl-engine.ts');
  const started = performance.now();
  const jpeg = request.metadata === 'keep' ? request.bytes : strippedForTranscode(request.bytes, header, gainMap);
  if (!jpeg) throw losslessRefused('its segments cannot be followed to the end of the picture');
  const bytes = inEngine('JPEG', () => {
    try {
      return jpegToLosslessJxl(jpeg, JXL_LOSSLESS_EFFORT);
    } catch (err) {
      if (!(err instanceof JxlJpegRefusedError)) throw err;
      throw losslessRefused(err.message);
    }
  });
  const encode = performance.now() - started;
  return {
    bytes,
    inputFormat: 'jpeg',
    format: 'jxl',
    width: plan.output.width,
    height: plan.output.height,
    quality: 'lossless',
    encodes: 1,
    lossless: true,
    timings: { decode: 0, resize: 0, encode },
  };
}
