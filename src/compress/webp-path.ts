// WebP input through the streaming engine (wasm/webp-engine.ts): libwebp's incremental decoder hands
// out rows, the ring resamples them, and they go to the WebP encoder's picture (YUV 4:2:0 for lossy,
// ARGB for lossless: a lossless input stays lossless), to the JPEG engine's encoder (through a JPEG job
// whose rows come from the WebP decoder), or whole to the PNG encoder. Metadata follows the JPEG rules
// (webp-riff.ts). A same-size WebP output that is not smaller than the input is replaced by the input's
// own image chunks re-packed without the stripped metadata, never by the input's bytes as they are.
import { JpegEngineError } from '../../wasm/jpeg-engine.ts';
import { WEBP_METHOD, WebpEngineError, withWebpJob, type WebpJob } from '../../wasm/webp-engine.ts';
import { ApiError } from '../http/errors.ts';
import type { Orientation } from './exif.ts';
import { FULL_CHROMA_QUALITY } from './jpeg-path.ts';
import type { MetadataMode } from './metadata.ts';
import type { Plan } from './memory-plan.ts';
import type { CompressRequest, CompressResult } from './pipeline.ts';
import { encodeAsRequested } from './target-size.ts';
import { jpegMarkersOf, packWebp, webpMetadata } from './webp-riff.ts';
import { WEBP_LOSSLESS_EFFORT } from './limits.ts';
import { timed, type Timings } from './timings.ts';



export async function compressWebp(request: CompressRequest, plan: Plan, orientation: Orientation, metadata: MetadataMode): Promise<CompressResult> {
  const timings: Timings = { decode: 0, resize: 0, encode: 0 };
  const meta = webpMetadata(request.bytes, metadata);
  const { width: sw, height: sh } = plan.stored;
  const { width: ow, height: oh } = plan.output;
  const finish = (encodeAt: (quality: number) => Uint8Array, extra: Partial<CompressResult> = {}): CompressResult => {
    const encoded = timed(timings, 'encode', () => encodeAsRequested(encodeAt, request.quality, request.targetKb));
    return { ...encoded, inputFormat: 'webp', format: request.format, width: ow, height: oh, lossless: false, timings, ...extra };
  };

  if (request.format === 'png') {
    // PNG output: the engine decodes and resamples; the whole-image PNG encoder takes it from there.
    const image = timed(timings, 'decode', () => engine(request.bytes, (job) => rgbaFrame(job, sw, sh, orientation)));
    const codecs = await import('./codecs.ts');
    return finish((quality) => codecs.encode('png', image, quality));
  }

  if (request.format === 'jpeg') {
    const markers = jpegMarkersOf(meta);
    return engine(request.bytes, (job) =>
      job.withJpeg(sw, sh, orientation, (jpeg) => {
        for (const marker of markers) jpeg.addMarker(marker.code, marker.data);
        // Retries encode the kept rows again instead of decoding the input again.
        if (request.targetKb !== undefined) timed(timings, 'decode', () => jpeg.keepFrame());
        return finish((quality) => jpeg.encode(quality, quality < FULL_CHROMA_QUALITY, plan.mode).bytes);
      }),
    );
  }

  return engine(request.bytes, (job) => {
    // A lossless input stays lossless when the plan says it fits (not with a size target: a quality
    // search needs lossy); large outputs try libwebp's token buffer within a memory allowance, else its
    // low-memory mode (memory-plan.ts).
    const { lossless, lowMemory, tokenGrowthBytes = 0 } = plan.webp ?? { lossless: false, lowMemory: false };
    timed(timings, 'decode', () => job.fill(sw, sh, orientation, lossless));
    const encode = (quality: number) => job.encode(lossless ? WEBP_LOSSLESS_EFFORT : quality, lossless, WEBP_METHOD, lowMemory, tokenGrowthBytes);
    const result = finish((quality) => packWebp(encode(quality).bytes, meta, ow, oh), {
      quality: lossless ? 100 : request.quality,
    });
    job.freePicture();
    if (plan.lossless && orientation === 1 && result.bytes.length >= request.bytes.length) {
      const repacked = packWebp(request.bytes, meta, ow, oh);
      if (repacked.length < result.bytes.length) return { ...result, bytes: repacked, lossless: true, quality: 100 };
    }
    return { ...result, lossless: result.lossless || lossless };
  });
}

/** The decoded pixels as RGBA (upright, resampled), for PNG output. */
function rgbaFrame(job: WebpJob, width: number, height: number, orientation: Orientation) {
  const { data, channels } = job.frame(width, height, orientation);
  const rgba = new Uint8Array((data.length / channels) * 4);
  for (let i = 0, o = 0; o < rgba.length; i += channels, o += 4) {
    rgba[o] = data[i]!;
    rgba[o + 1] = data[i + 1]!;
    rgba[o + 2] = data[i + 2]!;
    rgba[o + 3] = channels === 4 ? data[i + 3]! : 255;
  }
  const upright = orientation >= 5 ? { width: height, height: width } : { width, height };
  return { data: rgba, ...upright };
}

/** Runs `fn` in the engine; its refusals become 422 (the file) or 503 (memory), never a 500. */
function engine<R>(bytes: Uint8Array, fn: (job: WebpJob) => R): R {
  try {
    return withWebpJob(bytes, fn);
  } catch (err) {
    if (!(err instanceof WebpEngineError) && !(err instanceof JpegEngineError)) throw err;
    if (/memory/i.test(err.message)) {
      throw new ApiError('overloaded', 'the service ran short of memory for this image; retry in a moment', { headers: { 'Retry-After': '2' } });
    }
    throw new ApiError('unprocessable_image', `the WebP could not be decoded: ${err.message.replace(/\.$/, '')}`, { param: 'image' });
  }
}
