// JPEG input through the streaming engine: rows decoded at a DCT scale, resampled through a ring,
// encoded as they come (or kept once, when an orientation or a retry needs every row), by the engine's
// own encoder (trellis quantisation, progressive or two-pass by memory: memory-plan.ts).
// A JPEG output not smaller than a same-size input is replaced by a lossless rewrite, never by the input.
import { JpegEngineError, withJpegJob, type EncodedJpeg, type JpegJob } from '../../wasm/jpeg-engine.ts';
import type { RgbaImage } from '../../wasm/image.ts';
import { ApiError } from '../http/errors.ts';
import type { Orientation } from './exif.ts';
import { stripJpeg } from './jpeg-segments.ts';
import { outputMarkers, segmentFilter, type MetadataMode } from './metadata.ts';
import { FULL_CHROMA_QUALITY, PNG_WHOLE_MAX_OUTPUT_PIXELS, type Plan } from './memory-plan.ts';
import { applyOrientation } from './pixels.ts';
import type { CompressRequest, CompressResult } from './pipeline.ts';
import { encodeAsRequested } from './target-size.ts';
import { timed, type Timings } from './timings.ts';

export { FULL_CHROMA_QUALITY };


export async function compressJpeg(request: CompressRequest, plan: Plan, orientation: Orientation, metadata: MetadataMode): Promise<CompressResult> {
  const timings: Timings = { decode: 0, resize: 0, encode: 0 };
  if (request.format !== 'jpeg') {
    // PNG or WebP output: the engine decodes and resamples; the whole-image encoders take it from there.
    const image = timed(timings, 'decode', () => engine(request.bytes, (job) => {
      job.setPixels(plan.scaleNum, plan.stored.width, plan.stored.height, 1);
      return rgbaFrom(job.frame(), plan.stored.width, plan.stored.height, job.channels);
    }));
    const upright = timed(timings, 'resize', () => applyOrientation(image, orientation));
    if (request.format === 'png') {
      const { paletteOf, writeFramePng } = await import('./png/writer.ts');
      const output = await writeFramePng(upright, paletteOf(request), upright.width * upright.height <= PNG_WHOLE_MAX_OUTPUT_PIXELS, timings);
      return {
        bytes: output.bytes, inputFormat: 'jpeg', format: 'png', width: upright.width, height: upright.height,
        quality: output.paletteQuality ?? request.quality, encodes: output.encodes, lossless: false, timings,
      };
    }
    const codecs = await import('./codecs.ts');
    return finish(request, timings, upright.width, upright.height, (quality) => codecs.encode(request.format, upright, quality, request.lossless === true));
  }
  return engine(request.bytes, (job) => {
    job.setPixels(plan.scaleNum, plan.stored.width, plan.stored.height, orientation);
    for (const marker of outputMarkers(job.info.markers, metadata, job.channels)) job.addMarker(marker.code, marker.data);
    const encode = (quality: number) => job.encode(quality, quality < FULL_CHROMA_QUALITY, plan.mode).bytes;
    // Retries encode the kept rows again instead of decoding the input again.
    if (request.targetKb !== undefined) timed(timings, 'decode', () => job.keepFrame());
    const result = finish(request, timings, plan.output.width, plan.output.height, encode);
    if (plan.lossless && result.bytes.length >= request.bytes.length) {
      return timed(timings, 'encode', () => losslessRewrite(request.bytes, job, result, orientation, metadata));
    }
    return result;
  });
}

/**
 * The lossless rewrites of the input, the smallest of which replaces a lossy result that is not smaller
 * than the input: coefficients transcoded with optimised Huffman tables, baseline and progressive (the
 * orientation turned on the DCT blocks), and for an upright file its coded data copied as is with the
 * metadata filtered. The lossy result stays only if it is smaller than all of them, or if the only
 * rewrites would trim edge blocks (an orientation on a size that is not a whole number of MCUs).
 */
function losslessRewrite(input: Uint8Array, job: JpegJob, lossy: CompressResult, orientation: Orientation, metadata: MetadataMode): CompressResult {
  // The rewrites keep the input's colour model (CMYK stays CMYK), so its profile is judged against that.
  const filter = segmentFilter(job.info.markers, metadata, job.info.components);
  job.clearMarkers();
  for (const marker of job.info.markers) {
    const data = filter(marker);
    if (data) job.addMarker(marker.code, data);
  }
  // A rotation that would trim partial edge blocks is no lossless rewrite: the caller asked for no crop.
  const candidates = [job.transcode(orientation, false), job.transcode(orientation, true)]
    .filter((c) => c.width === lossy.width && c.height === lossy.height);
  const stripped = orientation === 1 ? stripJpeg(input, filter) : null;
  if (stripped) candidates.push({ bytes: stripped, width: job.info.width, height: job.info.height });
  const best = candidates.reduce<EncodedJpeg>((a, b) => (b.bytes.length < a.bytes.length ? b : a), lossy);
  if (best === lossy) return lossy;
  return { ...lossy, bytes: best.bytes, width: best.width, height: best.height, encodes: lossy.encodes + candidates.length, lossless: true };
}

function finish(request: CompressRequest, timings: Timings, width: number, height: number, encodeAt: (quality: number) => Uint8Array): CompressResult {
  const encoded = timed(timings, 'encode', () => encodeAsRequested(encodeAt, request.quality, request.targetKb));
  return { ...encoded, inputFormat: 'jpeg', format: request.format, width, height, lossless: false, timings };
}

/** Runs `fn` in the engine; its refusals become 422 (the file) or 503 (memory), never a 500. */
function engine<R>(bytes: Uint8Array, fn: (job: JpegJob) => R): R {
  try {
    return withJpegJob(bytes, (job) => fn(job));
  } catch (err) {
    if (!(err instanceof JpegEngineError)) throw err;
    if (/memory/i.test(err.message)) {
      throw new ApiError('overloaded', 'the service ran short of memory for this image; retry in a moment', { headers: { 'Retry-After': '2' } });
    }
    throw new ApiError('unprocessable_image', `the JPEG could not be decoded: ${err.message.replace(/\.$/, '')}`, { param: 'image' });
  }
}

function rgbaFrom(pixels: Uint8Array, width: number, height: number, channels: number): RgbaImage {
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0, o = 0; o < rgba.length; i += channels, o += 4) {
    rgba[o] = pixels[i]!;
    rgba[o + 1] = pixels[i + (channels === 3 ? 1 : 0)]!;
    rgba[o + 2] = pixels[i + (channels === 3 ? 2 : 0)]!;
    rgba[o + 3] = 255;
  }
  return { data: rgba, width, height };
}
