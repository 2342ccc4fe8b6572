// What a row-fed encoder (AVIF, avif-path.ts; JPEG XL, jxl/jxl-path.ts) takes: an input's upright rows
// with the metadata the output carries, and the widening of grey or opaque rows to the encoder's channels.
import type { ImageMetadata } from './metadata.ts';
import type { RowProducer } from './png/writer.ts';

/** Rows of any input, upright at the output size, with the metadata the output carries. */
export interface RowSource {
  /** Channels of each row the producer gives: 1 grey, 3 RGB, 4 RGBA. */
  channels: number;
  produce: RowProducer;
  metadata: ImageMetadata;
}

/**
 * A row of `from` channels as `to` channels (a view of a reused buffer, or the row itself): grey is
 * spread to RGB, an opaque RGBA row loses its alpha byte.
 */
export function widener(from: number, to: 3 | 4, width: number): (row: Uint8Array) => Uint8Array {
  if (from === to) return (row) => row;
  const out = new Uint8Array(width * to);
  if (to === 4) out.fill(255);
  return (row) => {
    for (let x = 0; x < width; x++) {
      const i = x * from;
      const o = x * to;
      if (from === 1) {
        out[o] = out[o + 1] = out[o + 2] = row[i]!;
      } else {
        out[o] = row[i]!;
        out[o + 1] = row[i + 1]!;
        out[o + 2] = row[i + 2]!;
      }
    }
    return out;
  };
}
