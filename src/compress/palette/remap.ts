// Remapping rows to a palette, with Floyd–Steinberg dithering (serpentine, its error damped so that a
// flat area stays flat and a hard edge does not smear). The palette's error is measured on every pixel
// as it is mapped (as pngquant defines its quality: each pixel against its nearest entry, the
// dithering's noise aside), so the quality reported is the output's, not the histogram's estimate.
import { BINS, binOf, colourDistance, mseToQuality, type Palette } from './quantise.ts';

/** Share of the diffused error carried on: below 1 keeps noise out of areas the palette nearly fits. */
const DITHER_LEVEL = 0.85;
/** Largest error (per channel, 0–255) carried to the neighbours: beyond it an edge would smear. */
const MAX_CARRIED_ERROR = 40;
/**
 * Dithering is for gradients, where a palette would band. A pixel that differs from a neighbour (left,
 * right, above) by more than EDGE_CONTRAST (summed over RGBA) is on an edge, and one equal to all of
 * them (within FLAT_CONTRAST) is in a flat area: either is mapped to its nearest entry and passes no
 * error on (pngquant's dither map spares edges the same way). On text, lines and flat panels dither
 * would be noise that costs sharpness and bytes.
 */
const EDGE_CONTRAST = 48;
const FLAT_CONTRAST = 2;

export class Remapper {
  /** The palette as written: RGBA, not premultiplied, entries that are not opaque first (a shorter tRNS). */
  readonly entries: Uint8Array;
  readonly size: number;
  private readonly pre: Float32Array;
  /** Per entry: a quarter of the squared distance to its nearest other entry (a pixel closer is theirs). */
  private readonly safe: Float32Array;
  private readonly guess = new Int16Array(BINS).fill(-1);
  /** Entry indices sorted by premultiplied green, and those greens. */
  private readonly byGreen: Int16Array;
  private readonly greens: Float32Array;
  private readonly width: number;
  private readonly dither: boolean;
  private errCur: Float32Array;
  private above: Uint8Array;
  private errNext: Float32Array;
  private row = 0;
  private squared = 0;
  private pixels = 0;

  constructor(palette: Palette, width: number, dither: boolean) {
    this.width = width;
    this.dither = dither;
    const list: number[][] = [];
    for (let i = 0; i < palette.size; i++) {
      const a = Math.max(0, Math.min(255, Math.round(palette.colours[i * 4 + 3]!)));
      const un = (v: number) => (a === 0 ? 0 : Math.max(0, Math.min(255, Math.round((v * 255) / a))));
      list.push([un(palette.colours[i * 4]!), un(palette.colours[i * 4 + 1]!), un(palette.colours[i * 4 + 2]!), a]);
    }
    const unique = [...new Map(list.map((c) => [c.join(','), c])).values()].sort((x, y) => x[3]! - y[3]!);
    this.size = unique.length;
    this.entries = Uint8Array.from(unique.flat());
    this.pre = Float32Array.from(
      unique.flatMap(([r, g, b, a]) => [(r! * a!) / 255, (g! * a!) / 255, (b! * a!) / 255, a!]),
    );
    this.safe = new Float32Array(this.size).map((_, i) => {
      let nearest = Infinity;
      for (let j = 0; j < this.size; j++)
        if (j !== i)
          nearest = Math.min(
            nearest,
            this.distance(i, this.pre[j * 4]!, this.pre[j * 4 + 1]!, this.pre[j * 4 + 2]!, this.pre[j * 4 + 3]!),
          );
      return nearest / 4;
    });
    this.byGreen = Int16Array.from({ length: this.size }, (_, i) => i).sort(
      (x, y) => this.pre[x * 4 + 1]! - this.pre[y * 4 + 1]!,
    );
    this.greens = Float32Array.from(this.byGreen, (i) => this.pre[i * 4 + 1]!);
    this.errCur = new Float32Array((width + 2) * 4);
    this.errNext = new Float32Array((width + 2) * 4);
    this.above = new Uint8Array(width * 4);
  }

  /** Maps one RGBA row to palette indices in `out`. */
  mapRow(rgba: Uint8Array, out: Uint8Array): void {
    const w = this.width;
    const forward = this.row % 2 === 0;
    const cur = this.errCur;
    const next = this.errNext;
    next.fill(0);
    for (let step = 0; step < w; step++) {
      const x = forward ? step : w - 1 - step;
      const a0 = rgba[x * 4 + 3]!;
      const k = a0 / 255;
      const r0 = rgba[x * 4]! * k,
        g0 = rgba[x * 4 + 1]! * k,
        b0 = rgba[x * 4 + 2]! * k;
      let r = r0,
        g = g0,
        b = b0,
        a = a0;
      const e = (x + 1) * 4;
      const dither = this.dither && this.gradient(rgba, x);
      if (dither) {
        a = clamp(a0 + cur[e + 3]!);
        r = Math.min(a, clamp(r0 + cur[e]!));
        g = Math.min(a, clamp(g0 + cur[e + 1]!));
        b = Math.min(a, clamp(b0 + cur[e + 2]!));
      }
      const index = this.nearest(r, g, b, a);
      out[x] = index;
      const o = index * 4;
      const pr = this.pre[o]!,
        pg = this.pre[o + 1]!,
        pb = this.pre[o + 2]!,
        pa = this.pre[o + 3]!;
      // pngquant's quality is the palette's error, without the dithering's noise: the nearest entry to
      // the pixel itself (the one just chosen when nothing was diffused).
      this.squared += this.distance(dither ? this.nearest(r0, g0, b0, a0) : index, r0, g0, b0, a0);
      if (!dither) continue;
      const errs = [r - pr, g - pg, b - pb, a - pa];
      const dir = forward ? 4 : -4;
      for (let c = 0; c < 4; c++) {
        const err = Math.max(-MAX_CARRIED_ERROR, Math.min(MAX_CARRIED_ERROR, errs[c]!)) * DITHER_LEVEL;
        if (err === 0) continue;
        cur[e + dir + c]! += (err * 7) / 16;
        next[e - dir + c]! += (err * 3) / 16;
        next[e + c]! += (err * 5) / 16;
        next[e + dir + c]! += err / 16;
      }
    }
    this.errCur = next;
    this.errNext = cur;
    if (this.dither) this.above.set(rgba.subarray(0, w * 4));
    this.row++;
    this.pixels += w;
  }

  /** The quality (pngquant's 0–100 scale) of the rows mapped so far. */
  quality(): number {
    return mseToQuality(this.squared / Math.max(1, this.pixels));
  }

  /** Whether pixel x of the row is in a gradient: neither on an edge nor flat, against its row neighbours and the pixel above. */
  private gradient(rgba: Uint8Array, x: number): boolean {
    const at = x * 4;
    const diff = (other: Uint8Array, o: number) =>
      Math.abs(rgba[at]! - other[o]!) +
      Math.abs(rgba[at + 1]! - other[o + 1]!) +
      Math.abs(rgba[at + 2]! - other[o + 2]!) +
      Math.abs(rgba[at + 3]! - other[o + 3]!);
    let most = 0;
    if (x > 0) most = diff(rgba, at - 4);
    if (x < this.width - 1) most = Math.max(most, diff(rgba, at + 4));
    if (this.row > 0) most = Math.max(most, diff(this.above, at));
    return most > FLAT_CONTRAST && most <= EDGE_CONTRAST;
  }

  private distance(i: number, r: number, g: number, b: number, a: number): number {
    const o = i * 4;
    return colourDistance(this.pre[o]!, this.pre[o + 1]!, this.pre[o + 2]!, this.pre[o + 3]!, r, g, b, a);
  }

  /**
   * The nearest entry: the last answer for this bin when it is provably nearest (closer than half the
   * distance to its own nearest neighbour), else a search outwards from the pixel's green value over
   * the entries sorted by green, each direction stopped once green alone is farther than the best.
   */
  private nearest(r: number, g: number, b: number, a: number): number {
    const bin = binOf(r, g, b, a);
    const guess = this.guess[bin]!;
    let best = guess >= 0 ? guess : 0;
    let bestD = this.distance(best, r, g, b, a);
    if (guess >= 0 && bestD <= this.safe[guess]!) return guess;
    const greens = this.greens;
    const order = this.byGreen;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (greens[mid]! < g) lo = mid + 1;
      else hi = mid;
    }
    for (let up = lo, down = lo - 1; up < this.size || down >= 0; ) {
      if (up < this.size) {
        const dg = greens[up]! - g;
        if (dg * dg >= bestD) up = this.size;
        else {
          const d = this.distance(order[up]!, r, g, b, a);
          if (d < bestD) {
            bestD = d;
            best = order[up]!;
          }
          up++;
        }
      }
      if (down >= 0) {
        const dg = g - greens[down]!;
        if (dg * dg >= bestD) down = -1;
        else {
          const d = this.distance(order[down]!, r, g, b, a);
          if (d < bestD) {
            bestD = d;
            best = order[down]!;
          }
          down--;
        }
      }
    }
    this.guess[bin] = best;
    return best;
  }
}

const clamp = (v: number): number => (v <= 0 ? 0 : v >= 255 ? 255 : v);
