// WebP input through the streaming engine (wasm/webp-engine.ts): libwebp's incremental decoder hands
// out rows, the ring resamples them, and they go to the WebP encoder's picture (YUV 4:2:0 for lossy,
// ARGB for lossless: a lossless input stays lossless), to the JPEG engine's encoder (through a JPEG job
// whose rows come from the WebP decoder), or pulled in batches by the PNG writer. Metadata follows the JPEG rules
// (webp-riff.ts). A same-size WebP output that is not smaller than the input is replaced by the input's
// own image chunks re-packed without the stripped metadata, never by the input's bytes as they are.
import { rowEncoded } from './formats.ts';
import { WEBP_METHOD, withWebpJobGivingWay, type WebpJob } from '../../wasm/webp-engine.ts';
import { inEngineAsync } from './engine-errors.ts';
import type { Orientation } from './exif.ts';
import type { Plan } from './memory-plan.ts';
import type { ImageMetadata } from './metadata.ts';
import type { CompressRequest, CompressResult, SourcePath } from './types.ts';
import { sourceToPng } from './source-png.ts';
import { webpQualityArgument } from './quality-scale.ts';
import { encodeAsRequestedAsync } from './target-size.ts';
import { jpegMarkersOf, packWebp, webpMetadata } from './webp-riff.ts';
import { FULL_CHROMA_QUALITY } from './limits.ts';
import { timedAsync, type Timings } from './timings.ts';

export const compressWebp: SourcePath = async (request, plan, orientation, metadata) => {
  const timings: Timings = { decode: 0, resize: 0, encode: 0 };
  const meta = webpMetadata(request.bytes, metadata);
  const { width: sw, height: sh } = plan.stored;
  const { width: ow, height: oh } = plan.output;
  const finish = async (
    encodeAt: (quality: number) => Promise<Uint8Array>,
    extra: Partial<CompressResult> = {},
  ): Promise<CompressResult> => {
    const encoded = await timedAsync(timings, 'encode', () =>
      encodeAsRequestedAsync(encodeAt, request.quality, request.targetKb),
    );
    return {
      ...encoded,
      inputFormat: 'webp',
      format: request.format,
      width: ow,
      height: oh,
      lossless: false,
      timings,
      ...extra,
    };
  };

  if (request.format === 'png') return webpToPng(request, plan, orientation, meta, timings);
  if (rowEncoded(request.format)) return webpToAvif(request, plan, orientation, meta, timings);

  // In steps that give way to the isolate's other requests (wasm/give-way.ts), on an instance of its own.
  if (request.format === 'jpeg') {
    const markers = jpegMarkersOf(meta);
    return engine(request.bytes, (job) =>
      job.withJpegGivingWay(sw, sh, orientation, async (jpeg) => {
        for (const marker of markers) jpeg.addMarker(marker.code, marker.data);
        // Retries encode the kept rows again instead of decoding the input again.
        if (request.targetKb !== undefined) await timedAsync(timings, 'decode', () => jpeg.keepFrameGivingWay());
        return finish(
          async (quality) => (await jpeg.encodeGivingWay(quality, quality < FULL_CHROMA_QUALITY, plan.mode)).bytes,
        );
      }),
    );
  }

  return engine(request.bytes, async (job) => {
    // A lossless input stays lossless when the plan says it fits (not with a size target: a quality
    // search needs lossy); large outputs try libwebp's token buffer within a memory allowance, else its
    // low-memory mode (memory-plan.ts).
    const { lossless, lowMemory, tokenGrowthBytes = 0 } = plan.webp ?? { lossless: false, lowMemory: false };
    await timedAsync(timings, 'decode', () => job.fillGivingWay(sw, sh, orientation, lossless));
    const encode = async (quality: number) =>
      (
        await job.encodeGivingWay(
          webpQualityArgument(quality, lossless),
          lossless,
          WEBP_METHOD,
          lowMemory,
          tokenGrowthBytes,
        )
      ).bytes;
    const result = await finish(async (quality) => packWebp(await encode(quality), meta, ow, oh), {
      quality: lossless ? 'lossless' : request.quality,
    });
    job.freePicture();
    if (plan.lossless && orientation === 1 && result.bytes.length >= request.bytes.length) {
      const repacked = packWebp(request.bytes, meta, ow, oh);
      if (repacked.length < result.bytes.length)
        return { ...result, bytes: repacked, lossless: true, quality: 'lossless' };
    }
    return { ...result, lossless: result.lossless || lossless };
  });
};

/**
 * PNG output: upright rows pulled from the engine in batches (the PNG writer awaits its deflater
 * between them), through the row encoder, or gathered for oxipng when the plan says it fits.
 */
async function webpToPng(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  meta: ImageMetadata,
  timings: Timings,
): Promise<CompressResult> {
  const { WebpRowReader } = await import('../../wasm/webp-engine.ts');
  return sourceToPng(
    request,
    plan,
    timings,
    'WebP',
    () => new WebpRowReader(request.bytes, plan.stored, orientation),
    () => meta,
  );
}

/** AVIF output: the engine's upright rows (RGBA when the input has alpha) pulled into the AVIF encoder band by band. */
async function webpToAvif(
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  meta: ImageMetadata,
  timings: Timings,
): Promise<CompressResult> {
  const [{ WebpRowReader }, { readerToAvif }] = await Promise.all([
    import('../../wasm/webp-engine.ts'),
    import('./avif-path.ts'),
  ]);
  return readerToAvif(
    request,
    plan,
    'webp',
    plan.avifChannels ?? 3,
    () => new WebpRowReader(request.bytes, plan.stored, orientation),
    () => meta,
    timings,
  );
}

/** Runs `fn` on a job over the input, on an instance held alone; the engine's refusals become the API's errors. */
function engine<R>(bytes: Uint8Array, fn: (job: WebpJob) => Promise<R>): Promise<R> {
  return inEngineAsync('WebP', () => withWebpJobGivingWay(bytes, fn));
}
