// AVIF output of any input: the input's upright rows (the JPEG or WebP engine's row pulls, or the PNG
// row decoder) go band by band into the AVIF encoder's YUV picture (wasm/avif-engine.ts), in its own
// module; no RGB(A) frame is held, except the one an EXIF orientation needs, once, in the decoder. The
// picture is encoded at the request's quality, or again for a size target. The metadata follows the
// input's own rules (compress/metadata.ts, webp-riff.ts): an RGB input's ICC profile is kept (another
// colour model's would misdescribe the RGB rows), EXIF and XMP only with metadata=keep and with their
// orientation already reset to 1, so nothing turns the upright pixels a second time.
import { inEngine } from './engine-errors.ts';
import type { InputFormat } from './formats.ts';
import type { Plan } from './memory-plan.ts';
import type { ImageMetadata } from './metadata.ts';
import type { CompressRequest, CompressResult } from './types.ts';
import type { RowProducer } from './png/writer.ts';
import { encodeRows, type RowSource } from './row-source.ts';
import { encoderQuality } from './quality-scale.ts';
import type { Timings } from './timings.ts';

/** Rows of any input, upright at the output size, with the metadata the output carries. */
export type AvifSource = RowSource;

const ENGINE_NAMES: Record<InputFormat, 'JPEG' | 'WebP' | 'PNG' | 'GIF' | 'AVIF' | 'HEIC'> = {
  jpeg: 'JPEG',
  webp: 'WebP',
  png: 'PNG',
  gif: 'GIF',
  heic: 'HEIC',
  avif: 'AVIF',
};

/**
 * Encodes `source` as the plan's AVIF. `channels` is the output's (the plan's avifChannels). The encoder is
 * closed however encoding ends.
 */
export async function encodeAvif(
  request: CompressRequest,
  plan: Plan,
  inputFormat: InputFormat,
  channels: 3 | 4,
  source: AvifSource,
  timings: Timings,
): Promise<CompressResult> {
  // JPEG XL output reads the same sources (jxl/jxl-path.ts).
  if (request.format === 'jxl')
    return (await import('./jxl/jxl-path.ts')).encodeJxl(request, plan, inputFormat, channels, source, timings);
  const [{ AvifRowEncoder }, { avifGrid }] = await Promise.all([
    import('../../wasm/avif-engine.ts'),
    import('../../wasm/avif-settings.ts'),
  ]);
  const { width, height } = plan.output;
  const map = request.avifGainMap;
  // A grid of an odd size is coded a pixel larger and cropped back by a clean aperture that the gain map's
  // tone-mapped item would need too (sr_avif.c): such a picture goes without its map.
  const intrabc = plan.avifIntrabc === true;
  const grid = avifGrid(width, height, intrabc);
  const carriesMap =
    map !== undefined &&
    (grid.cols * grid.rows === 1 || (width % 2 === 0 && height % 2 === 0)) &&
    splitsInto(map, grid);
  const encoded = await encodeRows(ENGINE_NAMES[inputFormat], request, width, channels, source, timings, {
    open: () => new AvifRowEncoder(width, height, channels, intrabc, plan.avifDepth ?? 8),
    setUp: (encoder) => {
      encoder.setMetadata(source.metadata);
      if (carriesMap) encoder.setGainMap(map, map.metadata, map.quality);
    },
    encode: (encoder, quality, search) => encoder.encode(encoderQuality('avif', quality), search),
  });
  return {
    ...encoded,
    inputFormat,
    format: 'avif',
    width,
    height,
    lossless: false,
    timings,
    ...(map ? { gainMap: carriesMap ? ('kept' as const) : ('dropped' as const) } : {}),
  };
}

/**
 * Whether a gain map can be cut into the picture's grid as sr_avif_gain_map cuts it (cells of the rounded-up
 * share, the last column and row the rest): a map narrower or shorter than its picture has cells (an
 * upload's map of one column beside a picture of two cells) leaves the last ones empty, which the module
 * refuses, so such a map goes without.
 */
function splitsInto(map: { width: number; height: number }, grid: { cols: number; rows: number }): boolean {
  const fits = (side: number, cells: number) => Math.ceil(side / cells) * (cells - 1) < side;
  return fits(map.width, grid.cols) && fits(map.height, grid.rows);
}

/** A JPEG or WebP engine's upright rows, pulled in batches (JpegRowReader, WebpRowReader). */
export interface AvifReader {
  channels: number;
  rows: RowProducer;
  close(failed: boolean): void;
}

/**
 * Runs `open`'s row reader into the encoder and closes it however encoding ends; `metadataOf` reads the
 * input's metadata for the output (from the reader, whose header is parsed).
 */
export async function readerToAvif<R extends AvifReader>(
  request: CompressRequest,
  plan: Plan,
  inputFormat: 'jpeg' | 'webp',
  channels: 3 | 4,
  open: () => R,
  metadataOf: (reader: R) => ImageMetadata,
  timings: Timings,
): Promise<CompressResult> {
  const reader = inEngine(ENGINE_NAMES[inputFormat], open);
  let failed = true;
  try {
    const source = {
      channels: reader.channels,
      produce: (sink: Parameters<RowProducer>[0]) => reader.rows(sink),
      metadata: metadataOf(reader),
    };
    const result = await encodeAvif(request, plan, inputFormat, channels, source, timings);
    failed = false;
    return result;
  } finally {
    reader.close(failed);
  }
}
