// What the engine's row resampler (wasm/src/sr_resize.c, through wasm/row-resizer.ts) holds for the PNG
// path, for the memory plan: its ring of (vertical taps + 1) rows of the output width in float RGBA,
// the input row as floats, the vertical pass's sums, and both axes' weights and offsets.

const LANCZOS_A = 3;

const taps = (inN: number, outN: number): number => Math.ceil((LANCZOS_A / Math.min(1, outN / inN)) * 2) + 2;

/** Bytes the resizer holds for these sizes. */
export function resizerBytes(inW: number, inH: number, outW: number, outH: number): number {
  const ring = (taps(inH, outH) + 1) * outW * 16;
  const rows = inW * 16 + outW * 16 + inW * 4 + outW * 4;
  const weights = outW * (taps(inW, outW) + 2) * 4 + outH * (taps(inH, outH) + 2) * 4;
  return ring + rows + weights;
}
