// Separable Lanczos3 through a ring of rows, for the PNG engine (the JPEG engine has the same in C,
// wasm/src/sr_resize.c, which this follows): each input row is filtered horizontally as it arrives and
// kept in the ring; an output row is filtered vertically as soon as its last input row is in. Memory:
// (vertical taps + 1) rows of the output width in floats. With `premultiply`, colour is weighted by
// alpha, so that transparent pixels do not bleed their hidden colour into the edges.

const LANCZOS_A = 3;

interface AxisFilter {
  first: Int32Array;
  count: Int32Array;
  weights: Float32Array;
  maxTaps: number;
}

const sinc = (x: number): number => (x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x));
const lanczos3 = (x: number): number => (Math.abs(x) < LANCZOS_A ? sinc(x) * sinc(x / LANCZOS_A) : 0);

function axisFilter(inN: number, outN: number): AxisFilter {
  const scale = outN / inN;
  const shrink = Math.min(1, scale);
  const support = LANCZOS_A / shrink;
  const maxTaps = Math.ceil(support * 2) + 2;
  const first = new Int32Array(outN);
  const count = new Int32Array(outN);
  const weights = new Float32Array(outN * maxTaps);
  for (let i = 0; i < outN; i++) {
    const centre = (i + 0.5) / scale - 0.5;
    const lo = Math.max(0, Math.ceil(centre - support));
    const hi = Math.min(inN - 1, Math.floor(centre + support), lo + maxTaps - 1);
    let sum = 0;
    for (let j = lo; j <= hi; j++) sum += weights[i * maxTaps + j - lo] = lanczos3((j - centre) * shrink);
    for (let j = 0; j <= hi - lo; j++) weights[i * maxTaps + j]! /= sum;
    first[i] = lo;
    count[i] = hi - lo + 1;
  }
  return { first, count, weights, maxTaps };
}

/** Bytes the resizer holds for these sizes: the ring and both axes' weights (for the memory plan). */
export function resizerBytes(inW: number, inH: number, outW: number, outH: number): number {
  const taps = (inN: number, outN: number) => Math.ceil((LANCZOS_A / Math.min(1, outN / inN)) * 2) + 2;
  return (taps(inH, outH) + 1) * outW * 16 + outW * (taps(inW, outW) + 2) * 4 + outH * (taps(inH, outH) + 2) * 4;
}

export class RowResizer {
  private readonly h: AxisFilter;
  private readonly v: AxisFilter;
  private readonly ring: Float32Array[];
  private pushed = 0;
  private pulled = 0;
  private readonly outW: number;
  private readonly outH: number;
  private readonly premultiply: boolean;
  private readonly acc: Float32Array;

  constructor(inW: number, inH: number, outW: number, outH: number, premultiply: boolean) {
    this.h = axisFilter(inW, outW);
    this.v = axisFilter(inH, outH);
    this.outW = outW;
    this.outH = outH;
    this.premultiply = premultiply;
    this.acc = new Float32Array(outW * 4);
    this.ring = Array.from({ length: this.v.maxTaps + 1 }, () => new Float32Array(outW * 4));
  }

  /** Takes the next input row (RGBA, 8 bits per sample). */
  push(row: Uint8Array): void {
    const dst = this.ring[this.pushed % this.ring.length]!;
    const { first, count, weights, maxTaps } = this.h;
    const pm = this.premultiply;
    for (let i = 0; i < this.outW; i++) {
      let r = 0, g = 0, b = 0, a = 0;
      const w0 = i * maxTaps;
      let at = first[i]! * 4;
      for (let t = 0; t < count[i]!; t++, at += 4) {
        const w = weights[w0 + t]!;
        const alpha = row[at + 3]!;
        const k = pm ? w * alpha : w;
        r += row[at]! * k; g += row[at + 1]! * k; b += row[at + 2]! * k; a += alpha * w;
      }
      dst[i * 4] = r; dst[i * 4 + 1] = g; dst[i * 4 + 2] = b; dst[i * 4 + 3] = a;
    }
    this.pushed++;
  }

  /** Writes the next output row into `out` (RGBA) if its input rows are all in; false otherwise. */
  pull(out: Uint8Array): boolean {
    if (this.pulled >= this.outH) return false;
    const i = this.pulled;
    const lo = this.v.first[i]!;
    const n = this.v.count[i]!;
    if (this.pushed < lo + n) return false;
    const w0 = i * this.v.maxTaps;
    const width = this.outW * 4;
    const acc = this.acc;
    acc.fill(0);
    for (let t = 0; t < n; t++) {
      const w = this.v.weights[w0 + t]!;
      const src = this.ring[(lo + t) % this.ring.length]!;
      for (let x = 0; x < width; x++) acc[x]! += src[x]! * w;
    }
    for (let x = 0; x < width; x += 4) {
      const a = acc[x + 3]!;
      const alpha = a <= 0 ? 0 : a >= 255 ? 255 : Math.round(a);
      out[x + 3] = alpha;
      if (this.premultiply) {
        const k = a > 0.5 ? 1 / a : 0;
        out[x] = clamp(acc[x]! * k); out[x + 1] = clamp(acc[x + 1]! * k); out[x + 2] = clamp(acc[x + 2]! * k);
      } else {
        out[x] = clamp(acc[x]!); out[x + 1] = clamp(acc[x + 1]!); out[x + 2] = clamp(acc[x + 2]!);
      }
    }
    this.pulled++;
    return true;
  }
}

const clamp = (v: number): number => (v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v));
