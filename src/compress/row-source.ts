// What a row-fed encoder (AVIF, avif-path.ts; JPEG XL, jxl/jxl-path.ts) takes: an input's upright rows
// with the metadata the output carries, and the widening of grey or opaque rows to the encoder's channels.
import { type EngineInput, inEngine, inEngineAsync } from './engine-errors.ts';
import type { ImageMetadata } from './metadata.ts';
import type { RowProducer } from './png/writer.ts';
import { encodeAsRequestedAsync, type RequestedEncode } from './target-size.ts';
import type { Timings } from './timings.ts';

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

/** A row-fed encoder as encodeRows drives it (wasm/avif-engine.ts, wasm/jxl-engine.ts). */
export interface RowEncoder {
  writeRow(row: Uint8Array): void;
  /** Closes the encoder's instance (once); `failed` when encoding did not end well. */
  close(failed: boolean): void;
}

/**
 * The use of a row-fed encoder, once for AVIF and JPEG XL: `open` makes it, `setUp` gives it the output's
 * metadata, the source's rows go in widened to `channels`, `encode` writes it at the request's quality
 * (again for a size target, `search` then true), and the encoder is closed however that ends; the
 * engine's refusals answer as `input`'s. Timings: the rows' time in the encoder and the encodes as
 * encode, the rest before the first encode as decode.
 */
export async function encodeRows<E extends RowEncoder>(
  input: EngineInput,
  request: { quality: number; targetKb?: number },
  width: number,
  channels: 3 | 4,
  source: RowSource,
  timings: Timings,
  encoder: {
    open: () => E;
    setUp: (encoder: E) => void;
    encode: (encoder: E, quality: number, search: boolean) => Promise<Uint8Array>;
  },
): Promise<RequestedEncode> {
  const started = performance.now();
  const opened = inEngine(input, encoder.open);
  let failed = true;
  try {
    inEngine(input, () => encoder.setUp(opened));
    const widen = widener(source.channels, channels, width);
    await inEngineAsync(input, () =>
      source.produce((row) => {
        const start = performance.now();
        opened.writeRow(widen(row));
        timings.encode += performance.now() - start;
      }),
    );
    const encodeStarted = performance.now();
    timings.decode = Math.max(0, encodeStarted - started - timings.resize - timings.encode);
    const search = request.targetKb !== undefined;
    const encoded = await inEngineAsync(input, () =>
      encodeAsRequestedAsync((quality) => encoder.encode(opened, quality, search), request.quality, request.targetKb),
    );
    timings.encode += performance.now() - encodeStarted;
    failed = false;
    return encoded;
  } finally {
    opened.close(failed);
  }
}
