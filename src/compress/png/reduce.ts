// The smallest exact layout for lossless rows, found by a scan before the rows are written (the row
// encoder must know its colour type before the first row): at most 256 distinct colours become a
// palette, grey stays or becomes grey, and an alpha channel that is opaque throughout is dropped. What
// oxipng does for outputs small enough to gather, for the ones written in rows; it costs one more
// decoding pass, which ends as soon as no reduction is left possible.
import type { PngLayout } from './encoder.ts';
import type { RowProducer } from './writer.ts';

const MAX_PALETTE = 256;

class NothingToReduce extends Error {}

export interface Reduction {
  layout: PngLayout;
  /** For a palette layout: the row of palette indices for an RGBA row. */
  toIndices?: (rgba: Uint8Array, out: Uint8Array) => Uint8Array;
}

/** Scans the rows; `layout` is what the source allows (grey and alpha as its colour type says). */
export async function reduceLayout(produce: RowProducer, layout: PngLayout): Promise<Reduction> {
  const { width, height } = layout;
  let colours: Map<number, number> | null = new Map();
  let opaque = true;
  let grey = true;
  try {
    await produce((row) => {
      const view = row.byteOffset % 4 === 0 ? new Uint32Array(row.buffer, row.byteOffset, width) : null;
      for (let x = 0; x < width; x++) {
        const i = x * 4;
        if (opaque && row[i + 3] !== 255) opaque = false;
        if (grey && (row[i] !== row[i + 1] || row[i] !== row[i + 2])) grey = false;
        if (colours) {
          const key = view
            ? view[x]!
            : (row[i]! | (row[i + 1]! << 8) | (row[i + 2]! << 16) | (row[i + 3]! << 24)) >>> 0;
          if (!colours.has(key)) {
            if (colours.size === MAX_PALETTE) colours = null;
            else colours.set(key, colours.size);
          }
        }
      }
      if (!colours && !opaque && !grey) throw new NothingToReduce();
    });
  } catch (err) {
    if (!(err instanceof NothingToReduce)) throw err;
  }
  const alpha = !opaque;
  if (colours && !(grey && colours.size > 16)) {
    // Entries that are not opaque first, so that tRNS stays short.
    const keys = [...colours.keys()].sort((a, b) => (a >>> 24) - (b >>> 24));
    const index = new Map(keys.map((k, i) => [k, i]));
    const palette = new Uint8Array(keys.length * 4);
    keys.forEach((k, i) => {
      palette.set([k & 255, (k >>> 8) & 255, (k >>> 16) & 255, k >>> 24], i * 4);
    });
    const toIndices = (rgba: Uint8Array, out: Uint8Array) => {
      const view = rgba.byteOffset % 4 === 0 ? new Uint32Array(rgba.buffer, rgba.byteOffset, width) : null;
      for (let x = 0; x < width; x++) {
        const i = x * 4;
        out[x] = index.get(
          view ? view[x]! : (rgba[i]! | (rgba[i + 1]! << 8) | (rgba[i + 2]! << 16) | (rgba[i + 3]! << 24)) >>> 0,
        )!;
      }
      return out;
    };
    return { layout: { width, height, colourType: 3, palette }, toIndices };
  }
  return { layout: { width, height, colourType: grey ? (alpha ? 4 : 0) : alpha ? 6 : 2 } };
}
