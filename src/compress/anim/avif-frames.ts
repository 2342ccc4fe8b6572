// An AVIF image sequence's frames (wasm/avifdec-engine.ts: libavif's avifDecoderNextImage over dav1d, the
// same decode steps as a still's, so dav1d gives way inside each frame as it does for a still), each
// read out as RGBA rows into a canvas, turned upright by the file's irot/imir, with its display time
// (the track's sample durations) and the loop count from the edit list (repetitions + 1 plays; for ever,
// or no edit list: for ever, as browsers play it). Written as animated WebP (anim/anim-path.ts), which
// carries no profile of its own: Display P3 by nclx is converted to sRGB, as BT.2020 and HDR already are;
// a sequence's ICC profile is carried to the output (ICCP) with its pixels unchanged.
import { refusedWhenBroken } from '../avif-input/avif-path.ts';
import { heifUnprocessable } from '../engine-errors.ts';
import type { ImageHeader } from '../header.ts';
import { applyOrientation } from '../pixels.ts';
import type { FrameSource } from './frames.ts';

/** WebP's loop count (plays, 0: for ever) for a sequence's repetitions after the first play (-1 for ever, -2 unknown). */
export const webpLoopOfRepetitions = (repetitions: number): number =>
  repetitions < 0 ? 0 : Math.min(65535, repetitions + 1);

export async function avifFrames(bytes: Uint8Array, header: ImageHeader): Promise<FrameSource> {
  const { AvifDecoder } = await import('../../../wasm/avifdec-engine.ts');
  const decoder = refusedWhenBroken(
    () => new AvifDecoder(bytes, header.avif?.codedPixels ?? header.width * header.height),
  );
  let profile: Uint8Array | undefined;
  try {
    const { width, height } = decoder.info;
    if (width !== header.width || height !== header.height)
      throw heifUnprocessable(
        'AVIF',
        `its picture is ${width}×${height}, not the ${header.width}×${header.height} its boxes declare`,
      );
    decoder.toSrgb();
    const { icc } = decoder.metadata();
    if (decoder.info.colour === 'as-is' && icc.length > 0) profile = icc;
  } catch (err) {
    decoder.close(true);
    throw err;
  }
  const { width, height, frames, repetitions } = decoder.info;
  const orientation = header.orientation;
  const turned = orientation >= 5;
  const canvas = new Uint8Array(width * height * 4);
  const source: FrameSource = {
    width: turned ? height : width,
    height: turned ? width : height,
    written: 0,
    total: frames,
    loop: webpLoopOfRepetitions(repetitions),
    ...(profile ? { icc: profile } : {}),
    each: (onFrame) =>
      refusedWhenBroken(async () => {
        for (let i = 0; i < frames; i++) {
          const durationMs = await decoder.nextImage();
          let y = 0;
          await decoder.rows((row) => {
            canvas.set(row, y++ * width * 4);
          });
          const upright = applyOrientation({ width, height, data: canvas }, orientation);
          source.written++;
          await onFrame(upright.data, durationMs);
        }
      }),
    close: (failed) => decoder.close(failed),
  };
  return source;
}
