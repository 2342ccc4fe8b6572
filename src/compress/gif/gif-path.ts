// GIF input: the first frame, composed on the logical screen (gif/decoder.ts), streams as RGBA rows
// through the PNG path's resampler and writers (png/png-path.ts `compressRows`), so a GIF converts to
// every output format as a PNG does: alpha kept in PNG, WebP and AVIF, flattened onto white in JPEG.
// An animated GIF asked as WebP (and not anim=false or a size target) is written as animated WebP:
// every frame composed on the logical screen as browsers draw it (gif/decoder.ts composeFrames), resized
// by the same resampler and put through the request's transformation (transform/rows.ts), and given to
// libwebp's animation encoder one at a time (wasm/webp-anim.ts), giving way between frames; X-Frames:
// N/N. Otherwise the first frame, X-Frames: 1/N.
// GIF metadata (comments, application extensions) is not carried.
import { ApiError } from '../../errors.ts';
import { giveWay } from '../../../wasm/give-way.ts';
import { inEngineAsync, translatingErrors } from '../engine-errors.ts';
import { animatesGif, type Plan } from '../memory-plan.ts';
import { DEFAULT_BACKGROUND, gravityText, type Transform } from '../transform/options.ts';
import { transformRows, type UprightRows } from '../transform/rows.ts';
import type { RowInput } from '../png/png-path.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { webpQualityArgument } from '../quality-scale.ts';
import type { ImageHeader } from '../header.ts';
import { composeFrames, decodeFirstFrameRows } from './decoder.ts';
import { firstFrameHasAlpha, GifError, readGifStructure, type GifInfo } from './structure.ts';

/**
 * A frame's display time: browsers play a GIF delay of 10 ms or less (0 and 1 hundredth of a second,
 * which encoders wrote for "as fast as possible") as 100 ms, and so does the animated WebP written.
 */
export const GIF_MIN_DELAY_MS = 10;
export const GIF_SHORT_DELAY_PLAYS_MS = 100;
export const playedDelayMs = (delayMs: number): number =>
  delayMs <= GIF_MIN_DELAY_MS ? GIF_SHORT_DELAY_PLAYS_MS : delayMs;

/**
 * WebP's loop count (times played, 0: for ever) for a GIF's NETSCAPE2.0 one (repeats after the first
 * play, 0: for ever), as browsers play it and libwebp's gif2webp converts it; no extension: played once.
 */
export const webpLoopCount = (gifLoop: number | null): number =>
  gifLoop === null ? 1 : gifLoop === 0 ? 0 : Math.min(65535, gifLoop + 1);

export async function compressGif(request: CompressRequest, plan: Plan, header: ImageHeader): Promise<CompressResult> {
  if (animatesGif('gif', header, request)) return inEngineAsync('GIF', () => compressAnimated(request, plan));
  const { compressRows } = await import('../png/png-path.ts');
  const { input, frames } = gifRowInput(request.bytes);
  const result = await unprocessableWhenBroken(() => compressRows(request, plan, 1, input));
  return { ...result, frames: { written: 1, total: frames } };
}

/** A GIF's first frame as a row input, and the frames it has (422 when its structure cannot be read). */
export function gifRowInput(bytes: Uint8Array): { input: RowInput; frames: number } {
  const info = unprocessableWhenBroken(() => {
    const read = readGifStructure(bytes);
    if (read.frames.length === 0) throw new GifError('it has no image');
    return read;
  });
  return {
    input: {
      format: 'gif',
      width: info.width,
      height: info.height,
      hasAlpha: firstFrameHasAlpha(info),
      grey: false,
      palette: null,
      decodeRows: (onRow) => unprocessableWhenBroken(() => decodeFirstFrameRows(bytes, info, onRow)),
      metadata: {},
      chunksFor: async () => [],
    },
    frames: info.frameCount,
  };
}

/** Runs `work`, turning the decoder's GifError (thrown now or, for a promise, later) into a 422. */
function unprocessableWhenBroken<T>(work: () => T): T {
  return translatingErrors(work, (err) =>
    err instanceof GifError
      ? new ApiError('unprocessable_image', `the GIF cannot be decoded: ${err.message}`, { param: 'image' })
      : err,
  );
}

/** Every frame of the GIF as one animated WebP of the plan's output size. */
async function compressAnimated(request: CompressRequest, plan: Plan): Promise<CompressResult> {
  const started = performance.now();
  const timings = { decode: 0, resize: 0, encode: 0 };
  const info: GifInfo = unprocessableWhenBroken(() => readGifStructure(request.bytes));
  const [{ WebpAnimEncoder }, { WEBP_METHOD }] = await Promise.all([
    import('../../../wasm/webp-anim.ts'),
    import('../../../wasm/webp-engine.ts'),
  ]);
  const { width, height } = plan.output;
  const lossless = request.lossless === true;
  const encoder = new WebpAnimEncoder(width, height, {
    loop: webpLoopCount(info.loopCount),
    quality: webpQualityArgument(request.quality, lossless),
    lossless,
    method: WEBP_METHOD,
  });
  let failed = true;
  let timestamp = 0;
  try {
    await unprocessableWhenBroken(() =>
      composeFrames(request.bytes, info, async (canvas, frame) => {
        const t = performance.now();
        if (plan.transform) await transformInto(canvas, info, plan, request.transform!, () => encoder.frame());
        else if (plan.resized) await resizeInto(canvas, info, plan, () => encoder.frame());
        else encoder.frame().set(canvas);
        const t1 = performance.now();
        timings.resize += t1 - t;
        encoder.add(timestamp);
        timings.encode += performance.now() - t1;
        timestamp += playedDelayMs(frame.delayMs);
        // The frame's encode is one call: give way after it, counted by its pixels.
        await giveWay(width * height);
      }),
    );
    const t = performance.now();
    const bytes = encoder.finish(timestamp);
    timings.encode += performance.now() - t;
    failed = false;
    timings.decode = Math.max(0, performance.now() - started - timings.resize - timings.encode);
    return {
      bytes,
      inputFormat: 'gif',
      format: 'webp',
      width,
      height,
      quality: lossless ? 'lossless' : request.quality,
      encodes: 1,
      lossless,
      timings,
      frames: { written: info.frames.length, total: info.frameCount },
      ...(plan.transform?.sourceCrop
        ? { crop: { box: plan.transform.sourceCrop, gravity: gravityText(request.transform!.gravity) } }
        : {}),
    };
  } finally {
    encoder.close(failed);
  }
}

/**
 * The composed screen through the request's transformation (transform/rows.ts: the crop, the turn and the
 * mirror, blur and sharpen, the padding), resized to the geometry's size by the engine's resampler, into
 * the encoder's frame: every frame of an animation gets what a still gets.
 */
async function transformInto(
  canvas: Uint8Array,
  info: GifInfo,
  plan: Plan,
  transform: Transform,
  target: () => Uint8Array,
): Promise<void> {
  const geometry = plan.transform!;
  const { resized } = geometry;
  const rowBytes = info.width * 4;
  const source: UprightRows = {
    channels: 4,
    rows: async (sink) => {
      if (resized.width === info.width && resized.height === info.height) {
        for (let r = 0; r < info.height; r++) await sink(canvas.subarray(r * rowBytes, (r + 1) * rowBytes));
        return;
      }
      const { EngineRowResizer } = await import('../../../wasm/row-resizer.ts');
      const resizer = new EngineRowResizer(info.width, info.height, resized.width, resized.height, true);
      const out = new Uint8Array(resized.width * 4);
      let failed = true;
      try {
        for (let r = 0; r < info.height; r++) {
          resizer.push(canvas.subarray(r * rowBytes, (r + 1) * rowBytes));
          while (resizer.pull(out)) await sink(out);
        }
        failed = false;
      } finally {
        resizer.close(failed);
      }
    },
  };
  const produce = transformRows(source, {
    geometry,
    flip: transform.flip,
    rotate: transform.rotate,
    background: transform.background ?? DEFAULT_BACKGROUND,
    flatten: false,
    turnBandRows: plan.turnBandRows,
    blur: transform.blur,
    sharpen: transform.sharpen,
  });
  const width = plan.output.width * 4;
  let y = 0;
  // The frame view is taken for each row: the instance's memory may have grown.
  await produce((row) => {
    target().set(row, y++ * width);
  });
}

/** The composed screen through the engine's resampler, row by row, into the encoder's frame. */
async function resizeInto(canvas: Uint8Array, info: GifInfo, plan: Plan, target: () => Uint8Array): Promise<void> {
  const { EngineRowResizer } = await import('../../../wasm/row-resizer.ts');
  const { width, height } = plan.output;
  const resizer = new EngineRowResizer(info.width, info.height, width, height, true);
  const out = new Uint8Array(width * 4);
  let failed = true;
  try {
    let y = 0;
    const rowBytes = info.width * 4;
    for (let r = 0; r < info.height; r++) {
      resizer.push(canvas.subarray(r * rowBytes, (r + 1) * rowBytes));
      // The frame view is taken after each pull: the instance's memory may have grown.
      while (resizer.pull(out)) target().set(out, y++ * width * 4);
    }
    failed = false;
  } finally {
    resizer.close(failed);
  }
}
