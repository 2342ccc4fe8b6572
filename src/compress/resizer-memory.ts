// What the engine's row resampler (wasm/src/sr_resize.c; wasm/row-resizer.ts for PNG rows) holds, for
// the memory plan of every input format: its ring of (vertical taps + 1) rows of the output width in
// float RGBA, the input row as floats or (fixed-point pass) as bytes, the vertical pass's sums, both
// axes' weights and offsets, the fixed-point horizontal weights (two taps in 16 bytes), and the
// vertical pass's per-row tap table.

const LANCZOS_A = 3;

const taps = (inN: number, outN: number): number => Math.ceil((LANCZOS_A / Math.min(1, outN / inN)) * 2) + 2;

/** Bytes the resizer holds for these sizes. */
export function resizerBytes(inW: number, inH: number, outW: number, outH: number): number {
  const ring = (taps(inH, outH) + 1) * outW * 16;
  const rows = inW * 16 + outW * 16 + inW * 4 + outW * 4 + inW * 4 + 32;
  const weights =
    outW * (taps(inW, outW) + 2) * 4 +
    outH * (taps(inH, outH) + 2) * 4 +
    outW * Math.ceil(taps(inW, outW) / 2) * 16 +
    taps(inH, outH) * 20;
  return ring + rows + weights;
}
