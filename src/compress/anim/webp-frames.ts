// Animated WebP input (wasm/webp-anim.ts WebpAnimDecoder: libwebp's WebPAnimDecoder): the frames composed
// on the canvas as players show them (blend and disposal), with their durations and the loop count as
// the file has them. Asked as WebP they are written as animated WebP (anim/anim-path.ts); otherwise the
// first frame streams as rows through the PNG path's resampler and writers (png/png-path.ts
// `compressRows`), as a GIF's does, with X-Frames: 1/N. The canvas is copied out of the instance for
// each frame: the resampler and the encoder share that instance, whose memory may grow under a view.
// Its ICC profile is carried to an animated output (ICCP; EXIF and XMP are not), and its metadata to a
// still of its first frame as a still WebP's is.
import type { ImageHeader } from '../header.ts';
import type { MetadataMode } from '../metadata.ts';
import type { Plan } from '../memory-plan.ts';
import type { RowInput } from '../png/png-path.ts';
import { usingRowInput } from '../row-input.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { inEngine, inEngineAsync } from '../engine-errors.ts';
import type { FrameSource } from './frames.ts';
import { webpMetadata } from '../webp-riff.ts';

/** The animated WebP's frames; the decoder is made now (422 when libwebp cannot read the animation). */
export async function webpFrames(bytes: Uint8Array): Promise<FrameSource> {
  const { WebpAnimDecoder } = await import('../../../wasm/webp-anim.ts');
  const decoder = inEngine('WebP', () => new WebpAnimDecoder(bytes));
  const copy = new Uint8Array(decoder.width * decoder.height * 4);
  const source: FrameSource = {
    width: decoder.width,
    height: decoder.height,
    written: 0,
    total: decoder.frames,
    loop: decoder.loop,
    ...iccOf(bytes),
    each: async (onFrame) => {
      for (let frame = decoder.next(); frame; frame = decoder.next()) {
        copy.set(frame.canvas);
        source.written++;
        await onFrame(copy, frame.durationMs);
      }
    },
    close: (failed) => decoder.close(failed),
  };
  return source;
}

/** The file's ICC profile (an RGB one), which its frames are in. */
function iccOf(bytes: Uint8Array): { icc?: Uint8Array } {
  const { icc } = webpMetadata(bytes, 'strip');
  return icc ? { icc } : {};
}

/**
 * The first frame of an animated WebP as a row input, and `close` (to call once its rows are no longer
 * wanted). The frame is decoded once, when its rows are first asked for, and kept: a writer may read the
 * rows twice (PNG's colour count, then its palette), and the decoder only goes forward.
 */
export async function webpFirstFrameInput(
  bytes: Uint8Array,
  header: ImageHeader,
  mode: MetadataMode,
): Promise<{ input: RowInput; frames: number; close: (failed: boolean) => void }> {
  const { metadataChunks } = await import('../png/metadata.ts');
  // As a still WebP's: the ICC profile, and EXIF and XMP with metadata=keep.
  const metadata = webpMetadata(bytes, mode);
  const source = await webpFrames(bytes);
  const rowBytes = source.width * 4;
  let first: Uint8Array | undefined;
  const decodeFirst = (): Promise<Uint8Array> =>
    inEngineAsync('WebP', async () => {
      let canvas: Uint8Array | undefined;
      await source
        .each(async (frame) => {
          canvas = frame;
          // Only the first frame: the others are never decoded.
          throw FIRST_FRAME_DONE;
        })
        .catch((err: unknown) => {
          if (err !== FIRST_FRAME_DONE) throw err;
        });
      if (!canvas) throw new Error('unreachable: an animated WebP without frames is refused from its header');
      return canvas;
    });
  const input: RowInput = {
    format: 'webp',
    width: source.width,
    height: source.height,
    // VP8X's alpha flag: set by writers when a frame has alpha or does not cover the canvas.
    hasAlpha: header.hasAlphaChannel,
    grey: false,
    palette: null,
    decodeRows: async (onRow) => {
      first ??= await decodeFirst();
      for (let r = 0; r < source.height; r++) await onRow(first.subarray(r * rowBytes, (r + 1) * rowBytes));
    },
    metadata,
    chunksFor: (colourType) => metadataChunks(metadata, colourType),
  };
  return { input, frames: source.total, close: source.close };
}

const FIRST_FRAME_DONE = Symbol('first frame done');

/** An animated WebP's first frame, written as the request's format (not animated WebP: anim-path.ts). */
export async function compressWebpFirstFrame(
  request: CompressRequest,
  plan: Plan,
  header: ImageHeader,
): Promise<CompressResult> {
  const { compressRows } = await import('../png/png-path.ts');
  const opened = await webpFirstFrameInput(request.bytes, header, request.metadata ?? 'strip');
  const result = await usingRowInput(opened, (input) => compressRows(request, plan, header.orientation, input));
  return { ...result, frames: { written: 1, total: opened.frames } };
}
