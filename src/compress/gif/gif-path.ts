// GIF input: the first frame, composed on the logical screen (gif/decoder.ts), streams as RGBA rows
// through the PNG path's resampler and writers (png/png-path.ts `compressRows`), so a GIF converts to
// every output format as a PNG does: alpha kept in PNG, WebP and AVIF, flattened onto white in JPEG.
// Animated output is not written yet: an animated GIF answers its first frame, and the result says how
// many frames the GIF has (X-Frames: 1/N). GIF metadata (comments, application extensions) is not carried.
import { translatingErrors } from '../engine-errors.ts';
import { ApiError } from '../../errors.ts';
import type { Plan } from '../memory-plan.ts';
import type { RowInput } from '../png/png-path.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { decodeFirstFrameRows } from './decoder.ts';
import { firstFrameHasAlpha, GifError, readGifStructure } from './structure.ts';

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
