// PNG output from rows, whatever their source (a PNG decoded in rows, or a frame another engine
// decoded): lossless or palette, streamed through the row encoder or, for outputs small enough that
// its memory fits, optimised whole by oxipng (it tries every filter and colour type). A palette is
// kept only when it is smaller than the lossless file; its quality is measured on the rows it wrote.
import type { RgbaImage } from '../../../wasm/image.ts';
import { PNG_OPTIMISE_LEVEL } from '../encoders.ts';
import { Histogram, choosePalette } from '../palette/quantise.ts';
import { Remapper } from '../palette/remap.ts';
import { insertAfterIhdr, type Chunk } from './chunks.ts';
import { PngRowEncoder, type PngLayout } from './encoder.ts';
import { reduceLayout } from './reduce.ts';

/** Calls `sink` with every output row (RGBA, or palette indices when `indices` was asked), top to bottom. */
export type RowProducer = (sink: (row: Uint8Array) => void | Promise<void>) => Promise<void>;

export interface PngOutputRequest {
  width: number;
  height: number;
  /** The lossless layout the rows suit (from the input's colour type); palette passthrough when it has one. */
  layout: PngLayout;
  /** Produces the rows; `indices` true gives palette indices (only for a passthrough layout). */
  produce: (indices: boolean) => RowProducer;
  /** Whole-image optimisation by oxipng instead of the row encoder (memory-plan.ts decides). */
  optimiseWhole: boolean;
  /** Palette quantisation: at most `colors`, the fewest that reach `quality`. */
  palette?: { colors: number; quality: number; dither: boolean };
  /** The ancillary chunks to write for an output of this colour type (png/metadata.ts). */
  chunksFor: (colourType: number) => Promise<Chunk[]>;
  /** Time spent encoding, added to as rows are written. */
  timing: { encode: number };
}

export interface PngOutput {
  bytes: Uint8Array;
  /** The palette's measured quality (pngquant's 0–100) when a palette was written, else null. */
  paletteQuality: number | null;
  encodes: number;
}

export async function writePng(req: PngOutputRequest): Promise<PngOutput> {
  return req.optimiseWhole ? writeWhole(req) : writeStreamed(req);
}

async function timedAsync<T>(timing: { encode: number }, work: () => T | Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    timing.encode += performance.now() - start;
  }
}

/** Rows in, through the row encoders; with a palette, two passes over the source. */
async function writeStreamed(req: PngOutputRequest): Promise<PngOutput> {
  const passthrough = req.layout.colourType === 3;
  // Lossless alone: the smallest exact layout is found first (a palette pass finds its colours itself).
  const reduction =
    !passthrough && !req.palette
      ? await reduceLayout(req.produce(false), req.layout)
      : { layout: req.layout, toIndices: undefined };
  const lossless = new PngRowEncoder(reduction.layout, await req.chunksFor(reduction.layout.colourType));
  const histogram = req.palette && !passthrough ? new Histogram() : null;
  const scratch = new Uint8Array(req.width);
  try {
    await req.produce(passthrough)(async (row) => {
      histogram?.addRow(row, req.width);
      const pixels = reduction.toIndices ? reduction.toIndices(row, scratch) : row;
      await timedAsync(req.timing, () => lossless.writeRow(pixels));
    });
  } catch (err) {
    lossless.abort();
    throw err;
  }
  const losslessBytes = await timedAsync(req.timing, () => lossless.finish());
  // A palette input already is a palette (its colours exact); quantising it again could only lose.
  if (!histogram || !req.palette) return { bytes: losslessBytes, paletteQuality: null, encodes: 1 };
  const palette = await choosePalette(histogram.points(), req.palette.colors, req.palette.quality);
  const remapper = new Remapper(palette, req.width, req.palette.dither);
  const encoder = new PngRowEncoder(
    { width: req.width, height: req.height, colourType: 3, palette: remapper.entries },
    await req.chunksFor(3),
  );
  const indices = new Uint8Array(req.width);
  try {
    await req.produce(false)(async (row) => {
      await timedAsync(req.timing, () => {
        remapper.mapRow(row, indices);
        return encoder.writeRow(indices);
      });
    });
  } catch (err) {
    encoder.abort();
    throw err;
  }
  const paletteBytes = await timedAsync(req.timing, () => encoder.finish());
  return paletteBytes.length < losslessBytes.length
    ? { bytes: paletteBytes, paletteQuality: remapper.quality(), encodes: 2 }
    : { bytes: losslessBytes, paletteQuality: null, encodes: 2 };
}

/** The rows gathered into one frame and optimised by oxipng; a palette is remapped into a second frame. */
async function writeWhole(req: PngOutputRequest): Promise<PngOutput> {
  const { width, height } = req;
  const frame = new Uint8Array(width * height * 4);
  let y = 0;
  await req.produce(false)((row) => {
    frame.set(row.subarray(0, width * 4), y++ * width * 4);
  });
  const { encodeOptimisedPng } = await import('../../../wasm/png.ts');
  const optimise = async (image: RgbaImage): Promise<Uint8Array> => {
    const png = await timedAsync(req.timing, () => encodeOptimisedPng(image, PNG_OPTIMISE_LEVEL));
    return insertAfterIhdr(png, await req.chunksFor(png[25]!));
  };
  const losslessBytes = await optimise({ data: frame, width, height });
  if (!req.palette || req.layout.colourType === 3) return { bytes: losslessBytes, paletteQuality: null, encodes: 1 };
  const histogram = new Histogram();
  for (let r = 0; r < height; r++) histogram.addRow(frame.subarray(r * width * 4, (r + 1) * width * 4), width);
  const palette = await choosePalette(histogram.points(), req.palette.colors, req.palette.quality);
  const remapper = new Remapper(palette, width, req.palette.dither);
  const indices = new Uint8Array(width);
  const entries = remapper.entries;
  for (let r = 0; r < height; r++) {
    const row = frame.subarray(r * width * 4, (r + 1) * width * 4);
    remapper.mapRow(row, indices);
    for (let x = 0; x < width; x++) row.set(entries.subarray(indices[x]! * 4, indices[x]! * 4 + 4), x * 4);
  }
  const paletteBytes = await optimise({ data: frame, width, height });
  return paletteBytes.length < losslessBytes.length
    ? { bytes: paletteBytes, paletteQuality: remapper.quality(), encodes: 2 }
    : { bytes: losslessBytes, paletteQuality: null, encodes: 2 };
}

/** The lossless layout for rows of RGBA whose source had `colourType`: grey stays grey, alpha only when present. */
export function losslessLayout(width: number, height: number, grey: boolean, alpha: boolean): PngLayout {
  return { width, height, colourType: grey ? (alpha ? 4 : 0) : alpha ? 6 : 2 };
}

/** Upright rows another engine decodes (JPEG or WebP input), pulled again for each pass. */
export interface RowSource {
  /** 1 grey, 3 RGB, 4 RGBA. */
  channels: number;
  rows(sink: (row: Uint8Array) => void | Promise<void>): Promise<void>;
}

/**
 * PNG output of another engine's rows: widened to the writers' RGBA a row at a time, never gathered
 * (oxipng's whole-image path gathers them, when the plan says it fits). No ancillary chunks: JPEG and
 * WebP metadata does not carry over to PNG.
 */
export async function writeSourcePng(
  source: RowSource,
  width: number,
  height: number,
  optimiseWhole: boolean,
  palette: PngOutputRequest['palette'],
  timing: { encode: number },
  chunksFor: (colourType: number) => Promise<Chunk[]>,
): Promise<PngOutput> {
  const rgba = new Uint8Array(width * 4).fill(255);
  const ch = source.channels;
  const produce = (): RowProducer => (sink) =>
    source.rows((row) => {
      for (let x = 0, i = 0; x < width; x++, i += ch) {
        rgba[x * 4] = row[i]!;
        rgba[x * 4 + 1] = row[i + (ch >= 3 ? 1 : 0)]!;
        rgba[x * 4 + 2] = row[i + (ch >= 3 ? 2 : 0)]!;
        if (ch === 4) rgba[x * 4 + 3] = row[i + 3]!;
      }
      return sink(rgba);
    });
  return writePng({
    width,
    height,
    layout: losslessLayout(width, height, ch === 1, ch === 4),
    produce,
    optimiseWhole,
    palette,
    chunksFor,
    timing,
  });
}

/** Default of `colors`. */
export const DEFAULT_PALETTE_COLORS = 256;

/** The palette settings of a request, when it asked for one. */
export const paletteOf = (request: {
  palette?: boolean;
  colors?: number;
  quality: number;
}): PngOutputRequest['palette'] =>
  request.palette
    ? { colors: request.colors ?? DEFAULT_PALETTE_COLORS, quality: request.quality, dither: true }
    : undefined;
