// blur and sharpen: separable filters over a sliding window of rows, so their memory is a number of
// rows × the width, never a frame. They run on the content's RGBA rows after the resize, the crop and the
// turn, before the padding (the pad stays its flat colour; the picture's own edges are extended, as
// libvips extends them). A Gaussian of small sigma is one kernel; a larger one is three box filters in
// a row (running sums: the same time per pixel whatever the sigma, within a few percent of the Gaussian).
// The unsharp mask works on the luminance, so it sharpens edges without colour fringes.
import { BLUR_SIGMA_PER_STEP, SHARPEN_AMOUNT_PER_STEP, SHARPEN_SIGMA } from './options.ts';

export type RowSink = (row: Uint8Array) => void | Promise<void>;

/** Rows in, in order; `end` lets out the rows still held. */
export interface RowFilter {
  push(row: Uint8Array): Promise<void>;
  end(): Promise<void>;
}

/** Past this sigma the Gaussian is three boxes: its kernel would cost more taps than the boxes' sums. */
const LARGEST_KERNEL_SIGMA = 2;
/** The Gaussian kernel reaches this many sigmas each way (its weights beyond are under 0.5 %). */
const KERNEL_SIGMAS = 3;
const BOXES = 3;

/** A 1-D filter: odd-length weights that sum to 1, or a box of radius r (all weights 1/(2r+1)). */
type Pass = { kind: 'kernel'; weights: Float32Array; radius: number } | { kind: 'box'; radius: number };

function gaussian(sigma: number): Pass {
  const radius = Math.max(1, Math.ceil(KERNEL_SIGMAS * sigma));
  const weights = new Float32Array(2 * radius + 1);
  let sum = 0;
  for (let k = -radius; k <= radius; k++) sum += weights[k + radius] = Math.exp(-(k * k) / (2 * sigma * sigma));
  for (let k = 0; k < weights.length; k++) weights[k]! /= sum;
  return { kind: 'kernel', weights, radius };
}

/** Three boxes whose variances add up to sigma² as nearly as odd widths allow (Kovesi's boxes for a Gaussian). */
function boxes(sigma: number): Pass[] {
  const ideal = Math.sqrt((12 * sigma * sigma) / BOXES + 1);
  let lower = Math.floor(ideal);
  if (lower % 2 === 0) lower--;
  const upper = lower + 2;
  const m = Math.round((12 * sigma * sigma - BOXES * lower * lower - 4 * BOXES * lower - 3 * BOXES) / (-4 * lower - 4));
  return Array.from({ length: BOXES }, (_, i) => ({ kind: 'box', radius: ((i < m ? lower : upper) - 1) / 2 }));
}

/** The passes of `blur` (1–250). */
export const blurPasses = (blur: number): Pass[] => {
  const sigma = blur * BLUR_SIGMA_PER_STEP;
  return sigma <= LARGEST_KERNEL_SIGMA ? [gaussian(sigma)] : boxes(sigma);
};

const sharpenPass = (): Pass => gaussian(SHARPEN_SIGMA);

/** One pass along a row of `channels` interleaved values, the edge pixels repeated past the ends. */
function horizontal(pass: Pass, src: Float32Array, dst: Float32Array, width: number, channels: number): void {
  const r = pass.radius;
  if (pass.kind === 'box') {
    // Padded by r + 1: the sum moves on by the pixel r + 1 ahead and drops the one r behind.
    const padded = paddedRow(src, width, channels, r + 1);
    const scale = 1 / (2 * r + 1);
    for (let c = 0; c < channels; c++) {
      let sum = 0;
      for (let j = 1; j <= 2 * r + 1; j++) sum += padded[j * channels + c]!;
      for (let x = 0, add = (2 * r + 2) * channels + c, drop = channels + c; x < width; x++) {
        dst[x * channels + c] = sum * scale;
        sum += padded[add]! - padded[drop]!;
        add += channels;
        drop += channels;
      }
    }
    return;
  }
  // The row with its edge pixels repeated r times each side, so the taps need no bounds.
  const padded = paddedRow(src, width, channels, r);
  const w = pass.weights;
  const taps = w.length;
  for (let x = 0; x < width; x++) {
    for (let c = 0; c < channels; c++) {
      let sum = 0;
      for (let k = 0, i = x * channels + c; k < taps; k++, i += channels) sum += w[k]! * padded[i]!;
      dst[x * channels + c] = sum;
    }
  }
}

let padBuffer = new Float32Array(0);

function paddedRow(src: Float32Array, width: number, channels: number, r: number): Float32Array {
  const length = (width + 2 * r) * channels;
  if (padBuffer.length < length) padBuffer = new Float32Array(length);
  const padded = padBuffer;
  padded.set(src.subarray(0, width * channels), r * channels);
  for (let k = 0; k < r; k++)
    for (let c = 0; c < channels; c++) {
      padded[k * channels + c] = src[c]!;
      padded[(r + width + k) * channels + c] = src[(width - 1) * channels + c]!;
    }
  return padded;
}

/**
 * One pass down the columns over a ring of rows: row y comes out once row y + r is in (or the last row),
 * the edge rows repeated past the top and bottom. Holds 2r + 2 rows.
 */
class Vertical {
  private readonly ring: Float32Array[];
  private readonly sum: Float64Array | null;
  private readonly out: Float32Array;
  private received = 0;
  private emitted = 0;
  private readonly pass: Pass;
  private readonly height: number;
  private readonly next: (row: Float32Array, y: number) => Promise<void>;

  constructor(pass: Pass, height: number, length: number, next: (row: Float32Array, y: number) => Promise<void>) {
    this.pass = pass;
    this.height = height;
    this.next = next;
    const rows = Math.min(2 * pass.radius + 2, height + 1);
    this.ring = Array.from({ length: rows }, () => new Float32Array(length));
    this.sum = pass.kind === 'box' ? new Float64Array(length) : null;
    this.out = new Float32Array(length);
  }

  private row(i: number): Float32Array {
    return this.ring[Math.min(this.height - 1, Math.max(0, i)) % this.ring.length]!;
  }

  async push(row: Float32Array): Promise<void> {
    this.ring[this.received % this.ring.length]!.set(row);
    this.received++;
    while (this.emitted < this.height && Math.min(this.emitted + this.pass.radius, this.height - 1) < this.received)
      await this.emit();
  }

  async end(): Promise<void> {
    while (this.emitted < this.height) await this.emit();
  }

  private emit(): Promise<void> {
    const y = this.emitted++;
    const r = this.pass.radius;
    const out = this.out;
    if (this.sum) {
      const sum = this.sum;
      if (y === 0) {
        sum.fill(0);
        for (let k = -r; k <= r; k++) {
          const src = this.row(k);
          for (let i = 0; i < sum.length; i++) sum[i]! += src[i]!;
        }
      } else {
        const enter = this.row(y + r);
        const leave = this.row(y - r - 1);
        for (let i = 0; i < sum.length; i++) sum[i]! += enter[i]! - leave[i]!;
      }
      const scale = 1 / (2 * r + 1);
      for (let i = 0; i < out.length; i++) out[i] = sum[i]! * scale;
    } else {
      const w = (this.pass as { weights: Float32Array }).weights;
      out.fill(0);
      for (let k = -r; k <= r; k++) {
        const src = this.row(y + k);
        const weight = w[k + r]!;
        for (let i = 0; i < out.length; i++) out[i]! += weight * src[i]!;
      }
    }
    return this.next(out, y);
  }
}

/** Passes one after the other down the columns; the last hands its rows and their index to `done`. */
function verticalChain(
  passes: Pass[],
  height: number,
  length: number,
  done: (row: Float32Array, y: number) => Promise<void>,
): { push(row: Float32Array): Promise<void>; end(): Promise<void> } {
  let next = done;
  const stages: Vertical[] = [];
  for (let i = passes.length - 1; i >= 0; i--) {
    const stage = new Vertical(passes[i]!, height, length, next);
    stages.unshift(stage);
    next = (row) => stage.push(row);
  }
  return {
    push: (row) => stages[0]!.push(row),
    end: async () => {
      for (const stage of stages) await stage.end();
    },
  };
}

/** Each pass along the row in turn, from `src`; returns the array that holds the result. */
function alongRow(passes: Pass[], src: Float32Array, spare: Float32Array, width: number, channels: number) {
  let [from, to] = [src, spare];
  for (const pass of passes) {
    horizontal(pass, from, to, width, channels);
    [from, to] = [to, from];
  }
  return from;
}

const clamp8 = (v: number): number => (v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v));

/**
 * A Gaussian blur of `width` × `height` RGBA rows into `sink`. With `alpha`, the colours are weighted by
 * it (premultiplied), so a transparent pixel's hidden colour does not bleed into its neighbours.
 */
export function blurRows(width: number, height: number, blur: number, alpha: boolean, sink: RowSink): RowFilter {
  const passes = blurPasses(blur);
  // Opaque rows are filtered as R, G, B only: a quarter less work, alpha written back as 255.
  const channels = alpha ? 4 : 3;
  const length = width * channels;
  const row = new Float32Array(length);
  const spare = new Float32Array(length);
  const out = new Uint8Array(width * 4);
  const chain = verticalChain(passes, height, length, async (v) => {
    for (let x = 0, i = 0, o = 0; x < width; x++, i += channels, o += 4) {
      const a = alpha ? v[i + 3]! : 255;
      const scale = alpha ? (a > 0 ? 255 / a : 0) : 1;
      out[o] = clamp8(v[i]! * scale);
      out[o + 1] = clamp8(v[i + 1]! * scale);
      out[o + 2] = clamp8(v[i + 2]! * scale);
      out[o + 3] = clamp8(a);
    }
    await sink(out);
  });
  return {
    push: (input) => {
      for (let x = 0, i = 0, o = 0; x < width; x++, i += 4, o += channels) {
        const a = input[i + 3]!;
        const scale = alpha ? a / 255 : 1;
        row[o] = input[i]! * scale;
        row[o + 1] = input[i + 1]! * scale;
        row[o + 2] = input[i + 2]! * scale;
        if (alpha) row[o + 3] = a;
      }
      return chain.push(alongRow(passes, row, spare, width, channels));
    },
    end: () => chain.end(),
  };
}

/** BT.601 luma weights: what the eye reads as an edge. */
const luma = (r: number, g: number, b: number): number => 0.299 * r + 0.587 * g + 0.114 * b;

/**
 * An unsharp mask of the luminance: each pixel's R, G and B move by amount × (Y − blurred Y), the same
 * for the three, so hues stay. The input rows wait in a ring until their blurred luminance is ready.
 */
export function sharpenRows(width: number, height: number, sharpen: number, sink: RowSink): RowFilter {
  const amount = sharpen * SHARPEN_AMOUNT_PER_STEP;
  const pass = sharpenPass();
  const held = Array.from({ length: Math.min(2 * pass.radius + 2, height + 1) }, () => new Uint8Array(width * 4));
  const y0 = new Float32Array(width);
  const spare = new Float32Array(width);
  const out = new Uint8Array(width * 4);
  let received = 0;
  const chain = verticalChain([pass], height, width, async (blurred, y) => {
    const src = held[y % held.length]!;
    for (let x = 0, i = 0; x < width; x++, i += 4) {
      const d = amount * (luma(src[i]!, src[i + 1]!, src[i + 2]!) - blurred[x]!);
      out[i] = clamp8(src[i]! + d);
      out[i + 1] = clamp8(src[i + 1]! + d);
      out[i + 2] = clamp8(src[i + 2]! + d);
      out[i + 3] = src[i + 3]!;
    }
    await sink(out);
  });
  return {
    push: (input) => {
      held[received++ % held.length]!.set(input);
      for (let x = 0, i = 0; x < width; x++, i += 4) y0[x] = luma(input[i]!, input[i + 1]!, input[i + 2]!);
      return chain.push(alongRow([pass], y0, spare, width, 1));
    },
    end: () => chain.end(),
  };
}

/** blur, then sharpen, as asked; null when neither was. */
export function filterRows(
  width: number,
  height: number,
  f: { blur?: number; sharpen?: number; alpha: boolean },
  sink: RowSink,
): RowFilter | null {
  let next: RowFilter | null = null;
  let into = sink;
  if (f.sharpen) {
    next = sharpenRows(width, height, f.sharpen, into);
    const sharpen = next;
    into = (row) => sharpen.push(row);
  }
  if (f.blur !== undefined) {
    const blur = blurRows(width, height, f.blur, f.alpha, into);
    const after = next;
    return {
      push: (row) => blur.push(row),
      end: async () => {
        await blur.end();
        await after?.end();
      },
    };
  }
  return next;
}

/** Rows a pass list holds down the columns. */
const heldRows = (passes: Pass[]): number => passes.reduce((n, p) => n + 2 * p.radius + 2, 0);

/** The filters' peak bytes for rows `width` wide: their rings of rows (float), sums and row buffers. */
export function filterBytes(width: number, f: { blur?: number; sharpen?: number }): number {
  let bytes = 0;
  if (f.blur !== undefined) {
    const passes = blurPasses(f.blur);
    const floats = width * 4 * 4;
    bytes +=
      (heldRows(passes) + 3) * floats + (passes[0]!.kind === 'box' ? passes.length * width * 4 * 8 : 0) + width * 4;
  }
  if (f.sharpen) {
    const pass = [sharpenPass()];
    bytes += (heldRows(pass) + 3) * width * 4 + heldRows(pass) * width * 4 + width * 4;
  }
  return bytes;
}
