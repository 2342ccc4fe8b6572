// JPEG input through the streaming engine: rows decoded at a DCT scale, resampled through a ring,
// encoded as they come (or kept once, when an orientation or a retry needs every row), by the engine's
// own encoder (trellis quantisation, progressive or two-pass by memory: memory-plan.ts), by the WebP
// encoder's picture in the same engine, or pulled in batches by the PNG writer.
// A JPEG output not smaller than a same-size input is replaced by a lossless rewrite, never by the input.
import { rowEncoded } from './formats.ts';
import { withJpegJobGivingWay, type EncodedJpeg, type JpegJob } from '../../wasm/jpeg-engine.ts';
import { inEngineAsync } from './engine-errors.ts';
import type { Orientation } from './exif.ts';
import { stripJpeg } from './jpeg-segments.ts';
import { jpegMetadata, outputMarkers, segmentFilter, type MetadataMode } from './metadata.ts';
import { FULL_CHROMA_QUALITY } from './limits.ts';
import type { Plan } from './memory-plan.ts';
import type { CompressRequest, CompressResult, SourcePath } from './types.ts';
import { sourceToPng } from './source-png.ts';
import { encodeAsRequestedAsync } from './target-size.ts';
import { timedAsync, type Timings } from './timings.ts';
import { webpQualityArgument } from './quality-scale.ts';

export const compressJpeg: SourcePath = async (request, plan, orientation, metadata) => {
  const timings: Timings = { decode: 0, resize: 0, encode: 0 };
  if (request.format === 'webp') return jpegToWebp(request, plan, orientation, metadata, timings);
  if (request.format === 'png') return jpegToPng(request, plan, orientation, metadata, timings);
  if (rowEncoded(request.format)) return jpegToAvif(request, plan, orientation, metadata, timings);
  // In steps that give way to the isolate's other requests (wasm/give-way.ts), on an instance of its own.
  return inEngineAsync('JPEG', () =>
    withJpegJobGivingWay(request.bytes, async (job) => {
      job.setPixels(plan.scaleNum, plan.stored.width, plan.stored.height, orientation);
      for (const marker of outputMarkers(job.info.markers, metadata, job.channels))
        job.addMarker(marker.code, marker.data);
      const encode = async (quality: number) =>
        (await job.encodeGivingWay(quality, quality < FULL_CHROMA_QUALITY, plan.mode)).bytes;
      // Retries encode the kept rows again instead of decoding the input again.
      if (request.targetKb !== undefined) await timedAsync(timings, 'decode', () => job.keepFrameGivingWay());
      const result = await finish(request, timings, plan.output.width, plan.output.height, encode);
      if (plan.lossless && result.bytes.length >= request.bytes.length) {
        return timedAsync(timings, 'encode', () => losslessRewrite(request.bytes, job, result, orientation, metadata));
      }
      return result;
    }),
  );
};

/**
 * WebP output: the engine's rows fill the WebP encoder's picture as they are decoded (YUV 4:2:0, or
 * ARGB for lossless), and the picture is encoded (again, for a size target) in the same engine.
 */
async function jpegToWebp(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  metadata: MetadataMode,
  timings: Timings,
): Promise<CompressResult> {
  const [{ withJpegAsWebpGivingWay, WEBP_METHOD }, { packWebp }] = await Promise.all([
    import('../../wasm/webp-engine.ts'),
    import('./webp-riff.ts'),
  ]);
  const { width, height } = plan.output;
  const lossless = request.lossless === true;
  const { lowMemory, tokenGrowthBytes = 0 } = plan.webp ?? { lossless, lowMemory: false };
  const pixels = { scaleNum: plan.scaleNum, width: plan.stored.width, height: plan.stored.height, orientation };
  const started = performance.now();
  const result = await inEngineAsync('JPEG', () =>
    withJpegAsWebpGivingWay(request.bytes, pixels, lossless, async (job, markers) => {
      timings.decode += performance.now() - started;
      const meta = jpegMetadata(markers, metadata);
      const encode = async (quality: number) =>
        packWebp(
          (
            await job.encodeGivingWay(
              webpQualityArgument(quality, lossless),
              lossless,
              WEBP_METHOD,
              lowMemory,
              tokenGrowthBytes,
            )
          ).bytes,
          meta,
          width,
          height,
        );
      return finish(request, timings, width, height, encode);
    }),
  );
  return lossless ? { ...result, quality: 'lossless', lossless: true } : result;
}

/**
 * PNG output: upright rows pulled from the engine in batches (the PNG writer awaits its deflater
 * between them), through the row encoder, or gathered for oxipng when the plan says its memory fits.
 * Each pass over the rows (layout scan, palette) decodes again rather than keeping a frame.
 */
async function jpegToPng(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  metadata: MetadataMode,
  timings: Timings,
): Promise<CompressResult> {
  const { JpegRowReader } = await import('../../wasm/jpeg-engine.ts');
  return sourceToPng(
    request,
    plan,
    timings,
    'JPEG',
    () => new JpegRowReader(request.bytes, plan.scaleNum, plan.stored.width, plan.stored.height, orientation),
    (reader) => jpegMetadata(reader.markers, metadata),
  );
}

/** AVIF output: the engine's upright rows pulled into the AVIF encoder band by band (grey spread to RGB). */
async function jpegToAvif(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  metadata: MetadataMode,
  timings: Timings,
): Promise<CompressResult> {
  const [{ JpegRowReader }, { readerToAvif }] = await Promise.all([
    import('../../wasm/jpeg-engine.ts'),
    import('./avif-path.ts'),
  ]);
  const { scaleNum, stored } = plan;
  return readerToAvif(
    request,
    plan,
    'jpeg',
    plan.avifChannels ?? 3,
    () => new JpegRowReader(request.bytes, scaleNum, stored.width, stored.height, orientation),
    (reader) => jpegMetadata(reader.markers, metadata),
    timings,
  );
}

/**
 * The lossless rewrites of the input, the smallest of which replaces a lossy result that is not smaller
 * than the input: coefficients transcoded with optimised Huffman tables, baseline and progressive (the
 * orientation turned on the DCT blocks), and for an upright file its coded data copied as is with the
 * metadata filtered. The lossy result stays only if it is smaller than all of them, or if the only
 * rewrites would trim edge blocks (an orientation on a size that is not a whole number of MCUs).
 */
async function losslessRewrite(
  input: Uint8Array,
  job: JpegJob,
  lossy: CompressResult,
  orientation: Orientation,
  metadata: MetadataMode,
): Promise<CompressResult> {
  // The rewrites keep the input's colour model (CMYK stays CMYK), so its profile is judged against that.
  const filter = segmentFilter(job.info.markers, metadata, job.info.components);
  job.clearMarkers();
  for (const marker of job.info.markers) {
    const data = filter(marker);
    if (data) job.addMarker(marker.code, data);
  }
  // A rotation that would trim partial edge blocks is no lossless rewrite: the caller asked for no crop.
  const candidates = [
    await job.transcodeGivingWay(orientation, false),
    await job.transcodeGivingWay(orientation, true),
  ].filter((c) => c.width === lossy.width && c.height === lossy.height);
  const stripped = orientation === 1 ? stripJpeg(input, filter) : null;
  if (stripped) candidates.push({ bytes: stripped, width: job.info.width, height: job.info.height });
  const best = candidates.reduce<EncodedJpeg>((a, b) => (b.bytes.length < a.bytes.length ? b : a), lossy);
  if (best === lossy) return lossy;
  return {
    ...lossy,
    bytes: best.bytes,
    width: best.width,
    height: best.height,
    encodes: lossy.encodes + candidates.length,
    quality: 'lossless',
    lossless: true,
  };
}

/** The encode (or a size target's search) and the result, the encoder giving way between its steps. */
async function finish(
  request: CompressRequest,
  timings: Timings,
  width: number,
  height: number,
  encodeAt: (quality: number) => Promise<Uint8Array>,
): Promise<CompressResult> {
  const encoded = await timedAsync(timings, 'encode', () =>
    encodeAsRequestedAsync(encodeAt, request.quality, request.targetKb),
  );
  return { ...encoded, inputFormat: 'jpeg', format: request.format, width, height, lossless: false, timings };
}
