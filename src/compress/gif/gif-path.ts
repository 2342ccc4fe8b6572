// GIF input: the first frame, composed on the logical screen (gif/decoder.ts), streams as RGBA rows
// through the PNG path's resampler and writers (png/png-path.ts `compressRows`), so a GIF converts to
// every output format as a PNG does: alpha kept in PNG, WebP and AVIF, flattened onto white in JPEG.
// An animated GIF asked as WebP (and not anim=false or a size target) is sent by the pipeline to
// anim/anim-path.ts, which writes animated WebP from every frame composed on the logical screen as
// browsers draw it (gifFrames, gif/decoder.ts composeFrames); X-Frames: N/N. Otherwise the first frame, X-Frames: 1/N.
// GIF metadata (comments, application extensions) is not carried.
import { ApiError } from '../../errors.ts';
import type { FrameSource } from '../anim/frames.ts';
import { translatingErrors } from '../engine-errors.ts';
import type { Plan } from '../memory-plan.ts';
import type { RowInput } from '../png/png-path.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
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

export async function compressGif(request: CompressRequest, plan: Plan): Promise<CompressResult> {
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

/** Every frame of the GIF, composed on its logical screen as browsers draw it, with the delays browsers play. */
export function gifFrames(bytes: Uint8Array): FrameSource {
  const info: GifInfo = unprocessableWhenBroken(() => readGifStructure(bytes));
  return {
    width: info.width,
    height: info.height,
    written: info.frames.length,
    total: info.frameCount,
    loop: webpLoopCount(info.loopCount),
    each: (onFrame) =>
      unprocessableWhenBroken(() =>
        composeFrames(bytes, info, (canvas, frame) => onFrame(canvas, playedDelayMs(frame.delayMs))),
      ),
    close: () => {},
  };
}
