// GIF input: the first frame, composed on the logical screen (gif/decoder.ts), streams as RGBA rows
// through the PNG path's resampler and writers (png/png-path.ts `compressRows`), so a GIF converts to
// every output format as a PNG does: alpha kept in PNG, WebP and AVIF, flattened onto white in JPEG.
// Animated output is not written yet: an animated GIF answers its first frame, and the result says how
// many frames the GIF has (X-Frames: 1/N). GIF metadata (comments, application extensions) is not carried.
import { ApiError } from '../../errors.ts';
import type { Plan } from '../memory-plan.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { decodeFirstFrameRows } from './decoder.ts';
import { firstFrameHasAlpha, GifError, readGifStructure } from './structure.ts';

export async function compressGif(request: CompressRequest, plan: Plan): Promise<CompressResult> {
  const { compressRows } = await import('../png/png-path.ts');
  try {
    const info = readGifStructure(request.bytes);
    if (info.frames.length === 0) throw new GifError('it has no image');
    const result = await compressRows(request, plan, 1, {
      format: 'gif',
      width: info.width,
      height: info.height,
      hasAlpha: firstFrameHasAlpha(info),
      grey: false,
      palette: null,
      decodeRows: (onRow) => decodeFirstFrameRows(request.bytes, info, onRow),
      metadata: {},
      chunksFor: async () => [],
    });
    return { ...result, frames: { written: 1, total: info.frameCount } };
  } catch (err) {
    if (err instanceof GifError)
      throw new ApiError('unprocessable_image', `the GIF cannot be decoded: ${err.message}`, { param: 'image' });
    throw err;
  }
}
