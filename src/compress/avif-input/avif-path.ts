// AVIF input: libavif over dav1d (wasm/avifdec-engine.ts, a module of its own loaded only here) decodes the
// primary item, or a sequence's first frame, into RGBA rows of its clean aperture, which stream through
// the PNG path's resampler and writers (png/png-path.ts `compressRows`) as a GIF's do; `irot`/`imir` turn
// them upright there as an EXIF orientation would (in AVIF the boxes decide it). Colours: the file's ICC
// profile goes to the output; Display P3 by nclx stays P3 (the output carries a Display P3 profile);
// BT.2020 and HDR (PQ, HLG) are converted to sRGB in the decoder, HDR tone-mapped (sr_avifdec.c says how).
// A sequence answers its first frame with X-Frames: 1/N, as an animated GIF does.
import { heifDecoding, heifUnprocessable } from '../engine-errors.ts';
import { AvifDecodeError, AvifUnsupportedError } from '../../../wasm/avifdec-error.ts';
import type { ApiError } from '../../errors.ts';
import type { ImageHeader } from '../header.ts';
import type { Plan } from '../memory-plan.ts';
import { exifUpright, type ImageMetadata, type MetadataMode } from '../metadata.ts';
import type { RowInput } from '../png/png-path.ts';
import { usingRowInput } from '../row-input.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import { DISPLAY_P3_PROFILE } from './display-p3.ts';

export async function compressAvif(request: CompressRequest, plan: Plan, header: ImageHeader): Promise<CompressResult> {
  const { compressRows } = await import('../png/png-path.ts');
  const opened = await avifRowInput(request.bytes, header, request.metadata ?? 'strip');
  const result = await usingRowInput(opened, (input) =>
    refusedWhenBroken(() => compressRows(request, plan, header.orientation, input)),
  );
  return { ...result, frames: { written: 1, total: header.avif?.frames ?? 1 } };
}

/**
 * An AVIF as a row input, and `close` (to call once its rows are no longer wanted): the decoder is
 * created now (the file parsed), its picture decoded when the rows are first asked for.
 */
export async function avifRowInput(
  bytes: Uint8Array,
  header: ImageHeader,
  mode: MetadataMode,
): Promise<{ input: RowInput; close: (failed: boolean) => void }> {
  const [{ AvifDecoder }, { metadataChunks }] = await Promise.all([
    import('../../../wasm/avifdec-engine.ts'),
    import('../png/metadata.ts'),
  ]);
  const decoder = refusedWhenBroken(
    () => new AvifDecoder(bytes, header.avif?.codedPixels ?? header.width * header.height),
  );
  try {
    const { width, height } = decoder.info;
    if (width !== header.width || height !== header.height)
      throw unprocessable(
        `its picture is ${width}×${height}, not the ${header.width}×${header.height} its boxes declare`,
      );
    const metadata = avifMetadata(decoder.metadata(), decoder.info.colour, mode);
    const input: RowInput = {
      format: 'avif',
      width,
      height,
      hasAlpha: decoder.info.alpha,
      grey: false,
      palette: null,
      decodeRows: (onRow) => refusedWhenBroken(() => decoder.rows(onRow)),
      metadata,
      chunksFor: (colourType) => metadataChunks(metadata, colourType),
    };
    return { input, close: (failed) => decoder.close(failed) };
  } catch (err) {
    decoder.close(true);
    throw err;
  }
}

/**
 * What the output carries: the colour description (the file's ICC profile, or Display P3's for P3 by
 * nclx; none when the pixels are, or were converted to, sRGB), and with metadata=keep the EXIF (its
 * orientation reset to 1: the rows are written upright) and XMP.
 */
export function avifMetadata(
  read: { icc: Uint8Array; exif: Uint8Array; xmp: Uint8Array },
  colour: 'as-is' | 'display-p3' | 'to-srgb',
  mode: MetadataMode,
): ImageMetadata {
  const out: ImageMetadata = {};
  if (colour === 'display-p3') out.icc = DISPLAY_P3_PROFILE;
  else if (colour === 'as-is' && read.icc.length > 0) out.icc = read.icc;
  if (mode !== 'keep') return out;
  if (read.exif.length > 0) {
    // libavif hands the EXIF payload from its TIFF header on; exifUpright takes JPEG's "Exif\0\0" before it.
    const signature = Uint8Array.from('Exif\0\0', (c) => c.charCodeAt(0));
    const withSignature = new Uint8Array(signature.length + read.exif.length);
    withSignature.set(signature);
    withSignature.set(read.exif, signature.length);
    out.exif = exifUpright(withSignature).subarray(signature.length);
  }
  if (read.xmp.length > 0) out.xmp = read.xmp;
  return out;
}

const unprocessable = (message: string): ApiError => heifUnprocessable('AVIF', message);

/** Runs `work`, turning the decoder's errors (thrown now or, for a promise, later) into the API's. */
export const refusedWhenBroken = <T>(work: () => T): T =>
  heifDecoding('AVIF', { unsupported: AvifUnsupportedError, decode: AvifDecodeError }, work);
