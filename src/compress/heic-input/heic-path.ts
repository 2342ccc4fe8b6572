// HEIC/HEIF input: libheif over libde265 (wasm/heicdec-engine.ts, a module of its own loaded only here)
// decodes the primary item a tile at a time into RGBA rows of its clean aperture, which stream through
// the PNG path's resampler and writers (png/png-path.ts `compressRows`) as an AVIF's do; `irot`/`imir`
// turn them upright there. Colours as for AVIF: the file's ICC profile goes to the output (an iPhone's
// Display P3 stays P3), Display P3 by nclx gets a Display P3 profile; other nclx are refused (415).
// HEIC_INPUT (docs/operations.md) decides whether HEIC is read at all: pipeline.ts `inspect`.
import { HeicDecodeError, HeicUnsupportedError } from '../../../wasm/heicdec-error.ts';
import type { ApiError } from '../../errors.ts';
import { heifDecoding, heifUnprocessable } from '../engine-errors.ts';
import { avifMetadata } from '../avif-input/avif-path.ts';
import type { ImageHeader } from '../header.ts';
import type { Plan } from '../memory-plan.ts';
import type { MetadataMode } from '../metadata.ts';
import type { RowInput } from '../png/png-path.ts';
import { usingRowInput } from '../row-input.ts';
import type { CompressRequest, CompressResult } from '../types.ts';

export async function compressHeic(request: CompressRequest, plan: Plan, header: ImageHeader): Promise<CompressResult> {
  const { compressRows } = await import('../png/png-path.ts');
  const opened = await heicRowInput(request.bytes, header, request.metadata ?? 'strip');
  return usingRowInput(opened, (input) =>
    refusedWhenBroken(() => compressRows(request, plan, header.orientation, input)),
  );
}

/** A HEIC as a row input, and `close` (to call once its rows are no longer wanted). */
export async function heicRowInput(
  bytes: Uint8Array,
  header: ImageHeader,
  mode: MetadataMode,
): Promise<{ input: RowInput; close: (failed: boolean) => void }> {
  const [{ HeicDecoder }, { metadataChunks }] = await Promise.all([
    import('../../../wasm/heicdec-engine.ts'),
    import('../png/metadata.ts'),
  ]);
  const heic = header.heic;
  const coded = heic?.crop ?? { x: 0, y: 0, width: header.width, height: header.height };
  const decoder = refusedWhenBroken(() => new HeicDecoder(bytes, heic?.codedPixels ?? header.width * header.height));
  try {
    const { width, height } = decoder.info;
    if (coded.x + coded.width > width || coded.y + coded.height > height)
      throw unprocessable(`its picture is ${width}×${height}, smaller than its boxes declare`);
    const metadata = avifMetadata(decoder.metadata(), decoder.info.colour, mode);
    const input: RowInput = {
      format: 'heic',
      width: coded.width,
      height: coded.height,
      hasAlpha: decoder.info.alpha,
      grey: false,
      palette: null,
      decodeRows: (onRow) => refusedWhenBroken(() => decoder.rows(coded, onRow)),
      metadata,
      chunksFor: (colourType) => metadataChunks(metadata, colourType),
    };
    return { input, close: (failed) => decoder.close(failed) };
  } catch (err) {
    decoder.close(true);
    throw err;
  }
}

const unprocessable = (message: string): ApiError => heifUnprocessable('HEIC', message);

/** Runs `work`, turning the decoder's errors (thrown now or, for a promise, later) into the API's. */
export const refusedWhenBroken = <T>(work: () => T): T =>
  heifDecoding('HEIC', { unsupported: HeicUnsupportedError, decode: HeicDecodeError }, work);
