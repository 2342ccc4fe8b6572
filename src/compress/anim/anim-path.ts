// Animated WebP output from an animation (an animated GIF, an animated WebP, an AVIF sequence), asked
// as WebP (memory-plan.ts `animates`): every frame composed on its canvas as players show it (the
// source's frames: gif/gif-frames.ts, anim/webp-frames.ts, anim/avif-frames.ts), resized by the
// engine's row resampler and put through the request's transformation (transform/rows.ts), and given to
// libwebp's animation encoder one at a time (wasm/webp-anim.ts), giving way between frames. Durations and
// the loop count are the source's (a GIF's as browsers play them); X-Frames: N/N.
import { giveWay } from '../../../wasm/give-way.ts';
import { inEngineAsync } from '../engine-errors.ts';
import type { InputFormat } from '../formats.ts';
import type { ImageHeader } from '../header.ts';
import type { Plan } from '../memory-plan.ts';
import type { FrameSource } from './frames.ts';
import { webpQualityArgument } from '../quality-scale.ts';
import { withIccProfile } from '../webp-riff.ts';
import { DEFAULT_BACKGROUND, gravityText, type Transform } from '../transform/options.ts';
import { transformRows, type UprightRows } from '../transform/rows.ts';
import type { CompressRequest, CompressResult } from '../types.ts';

export async function compressAnimation(
  request: CompressRequest,
  plan: Plan,
  inputFormat: InputFormat,
  header: ImageHeader,
): Promise<CompressResult> {
  // The engine's refusals (the encoder's, the WebP decoder's) as the API's: 422, or 503 out of memory.
  if (inputFormat === 'gif') {
    const { gifFrames } = await import('../gif/gif-path.ts');
    return inEngineAsync('GIF', () => encodeAnimation(request, plan, 'gif', gifFrames(request.bytes)));
  }
  if (inputFormat === 'webp') {
    const { webpFrames } = await import('./webp-frames.ts');
    return inEngineAsync('WebP', async () => encodeAnimation(request, plan, 'webp', await webpFrames(request.bytes)));
  }
  if (inputFormat === 'avif') {
    const { avifFrames } = await import('./avif-frames.ts');
    return inEngineAsync('AVIF', async () =>
      encodeAnimation(request, plan, 'avif', await avifFrames(request.bytes, header)),
    );
  }
  throw new Error(`unreachable: ${inputFormat} is not animated`);
}

/** Every frame of `source` as one animated WebP of the plan's output size. */
async function encodeAnimation(
  request: CompressRequest,
  plan: Plan,
  inputFormat: InputFormat,
  source: FrameSource,
): Promise<CompressResult> {
  const started = performance.now();
  const timings = { decode: 0, resize: 0, encode: 0 };
  let failed = true;
  try {
    const [{ WebpAnimEncoder }, { WEBP_METHOD }] = await Promise.all([
      import('../../../wasm/webp-anim.ts'),
      import('../../../wasm/webp-engine.ts'),
    ]);
    const { width, height } = plan.output;
    const lossless = request.lossless === true;
    const encoder = new WebpAnimEncoder(width, height, {
      loop: source.loop,
      quality: webpQualityArgument(request.quality, lossless),
      lossless,
      method: WEBP_METHOD,
    });
    let encoderFailed = true;
    let timestamp = 0;
    try {
      await source.each(async (canvas, durationMs) => {
        const t = performance.now();
        if (plan.transform) await transformInto(canvas, source, plan, request.transform!, () => encoder.frame());
        else if (plan.resized) await resizeInto(canvas, source, plan, () => encoder.frame());
        else encoder.frame().set(canvas);
        const t1 = performance.now();
        timings.resize += t1 - t;
        encoder.add(timestamp);
        timings.encode += performance.now() - t1;
        timestamp += durationMs;
        // The frame's encode is one call: give way after it, counted by its pixels.
        await giveWay(width * height);
      });
      const t = performance.now();
      const encodedBytes = encoder.finish(timestamp);
      const bytes = source.icc ? withIccProfile(encodedBytes, source.icc) : encodedBytes;
      timings.encode += performance.now() - t;
      encoderFailed = false;
      timings.decode = Math.max(0, performance.now() - started - timings.resize - timings.encode);
      failed = false;
      return {
        bytes,
        inputFormat,
        format: 'webp',
        width,
        height,
        quality: lossless ? 'lossless' : request.quality,
        encodes: 1,
        lossless,
        timings,
        frames: { written: source.written, total: source.total },
        ...(plan.transform?.sourceCrop
          ? { crop: { box: plan.transform.sourceCrop, gravity: gravityText(request.transform!.gravity) } }
          : {}),
      };
    } finally {
      encoder.close(encoderFailed);
    }
  } finally {
    source.close(failed);
  }
}

/**
 * The composed canvas through the request's transformation (transform/rows.ts: the crop, the turn and the
 * mirror, blur and sharpen, the padding), resized to the geometry's size by the engine's resampler, into
 * the encoder's frame: every frame of an animation gets what a still gets.
 */
async function transformInto(
  canvas: Uint8Array,
  size: { width: number; height: number },
  plan: Plan,
  transform: Transform,
  target: () => Uint8Array,
): Promise<void> {
  const geometry = plan.transform!;
  const { resized } = geometry;
  const rowBytes = size.width * 4;
  const source: UprightRows = {
    channels: 4,
    rows: async (sink) => {
      if (resized.width === size.width && resized.height === size.height) {
        for (let r = 0; r < size.height; r++) await sink(canvas.subarray(r * rowBytes, (r + 1) * rowBytes));
        return;
      }
      const { EngineRowResizer } = await import('../../../wasm/row-resizer.ts');
      const resizer = new EngineRowResizer(size.width, size.height, resized.width, resized.height, true);
      const out = new Uint8Array(resized.width * 4);
      let failed = true;
      try {
        for (let r = 0; r < size.height; r++) {
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

/** The composed canvas through the engine's resampler, row by row, into the encoder's frame. */
async function resizeInto(
  canvas: Uint8Array,
  size: { width: number; height: number },
  plan: Plan,
  target: () => Uint8Array,
): Promise<void> {
  const { EngineRowResizer } = await import('../../../wasm/row-resizer.ts');
  const { width, height } = plan.output;
  const resizer = new EngineRowResizer(size.width, size.height, width, height, true);
  const out = new Uint8Array(width * 4);
  let failed = true;
  try {
    let y = 0;
    const rowBytes = size.width * 4;
    for (let r = 0; r < size.height; r++) {
      resizer.push(canvas.subarray(r * rowBytes, (r + 1) * rowBytes));
      // The frame view is taken after each pull: the instance's memory may have grown.
      while (resizer.pull(out)) target().set(out, y++ * width * 4);
    }
    failed = false;
  } finally {
    resizer.close(failed);
  }
}
