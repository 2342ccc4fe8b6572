// The animation limits (limits.ts MAX_ANIM_*) for animated WebP and AVIF sequences, read from the file's
// structure before anything is decoded; a GIF's own reader words them for its frame rectangles
// (gif/structure.ts gifLimitBreach).
import { MAX_ANIM_FRAME_PIXELS, MAX_ANIM_FRAMES } from '../limits.ts';

/** What an animation of `frames` frames on a `width`×`height` canvas is over of the limits, or null. */
export function animationLimitBreach(kind: string, frames: number, width: number, height: number): string | null {
  if (frames > MAX_ANIM_FRAMES) return `the ${kind} has ${frames} frames; the limit is ${MAX_ANIM_FRAMES}`;
  const pixels = frames * width * height;
  if (pixels > MAX_ANIM_FRAME_PIXELS)
    return (
      `the ${kind}'s ${frames} frames come to ${(pixels / 1e6).toFixed(1)} megapixels ` +
      `(each counts its ${width}×${height} canvas); the limit is ${MAX_ANIM_FRAME_PIXELS / 1e6} megapixels of frames`
    );
  return null;
}
