// Remapping rows to a palette, with Floyd–Steinberg dithering (serpentine, its error damped so that a
// flat area stays flat and a hard edge does not smear). The palette's error is measured on every pixel
// as it is mapped (as pngquant defines its quality: each pixel against its nearest entry, the
// dithering's noise aside), so the quality reported is the output's, not the histogram's estimate.
import { BINS, binOf, mseToQuality, type Palette } from './quantise.ts';

/** Share of the diffused error carried on: below 1 keeps noise out of areas the palette nearly fits. */
const DITHER_LEVEL = 0.85;
/** Largest error (per channel, 0–255) carried to the neighbours: beyond it an edge would smear. */
const MAX_CARRIED_ERROR = 40;

export class Remapper {
  /** The palette as written: RGBA, not premultiplied, entries that are not opaque first (a shorter tRNS). */
  readonly entries: Uint8Array;
  readonly size: number;
  private readonly pre: Float32Array;
  /** Per entry: a quarter of the squared distance to its nearest other entry (a pixel closer is theirs). */
  private readonly safe: Float32Array;
  private readonly guess = new Int16Array(BINS).fill(-1);
  private readonly width: number;
  private readonly dither: boolean;
  private errCur: Float32Array;
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
    this.pre = Float32Array.from(unique.flatMap(([r, g, b, a]) => [(r! * a!) / 255, (g! * a!) / 255, (b! * a!) / 255, a!]));
    this.safe = new Float32Array(this.size).map((_, i) => {
      let nearest = Infinity;
      for (let j = 0; j < this.size; j++) if (j !== i) nearest = Math.min(nearest, this.distance(i, this.pre[j * 4]!, this.pre[j * 4 + 1]!, this.pre[j * 4 + 2]!, this.pre[j * 4 + 3]!));
      return nearest / 4;
    });
    this.errCur = new Float32Array((width + 2) * 4);
    this.errNext = new Float32Array((width + 2) * 4);
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
      const r0 = rgba[x * 4]! * k, g0 = rgba[x * 4 + 1]! * k, b0 = rgba[x * 4 + 2]! * k;
      let r = r0, g = g0, b = b0, a = a0;
      const e = (x + 1) * 4;
      if (this.dither) {
        a = clamp(a0 + cur[e + 3]!);
        r = Math.min(a, clamp(r0 + cur[e]!));
        g = Math.min(a, clamp(g0 + cur[e + 1]!));
        b = Math.min(a, clamp(b0 + cur[e + 2]!));
      }
      const index = this.nearest(r, g, b, a);
      out[x] = index;
      const o = index * 4;
      const pr = this.pre[o]!, pg = this.pre[o + 1]!, pb = this.pre[o + 2]!, pa = this.pre[o + 3]!;
      // pngquant's quality is the palette's error, without the dithering's noise: the nearest entry to
      // the pixel itself (the one just chosen when nothing was diffused).
      this.squared += this.distance(this.dither ? this.nearest(r0, g0, b0, a0) : index, r0, g0, b0, a0);
      if (!this.dither) continue;
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
    this.row++;
    this.pixels += w;
  }

  /** The quality (pngquant's 0–100 scale) of the rows mapped so far. */
  quality(): number {
    return mseToQuality(this.squared / Math.max(1, this.pixels));
  }

  private distance(i: number, r: number, g: number, b: number, a: number): number {
    const o = i * 4;
    return (this.pre[o]! - r) ** 2 + (this.pre[o + 1]! - g) ** 2 + (this.pre[o + 2]! - b) ** 2 + (this.pre[o + 3]! - a) ** 2;
  }

  private nearest(r: number, g: number, b: number, a: number): number {
    const bin = binOf(r, g, b, a);
    const guess = this.guess[bin]!;
    if (guess >= 0 && this.distance(guess, r, g, b, a) <= this.safe[guess]!) return guess;
    let best = 0;
    let bestD = Infinity;
    const pre = this.pre;
    for (let i = 0, o = 0; i < this.size; i++, o += 4) {
      const dr = pre[o]! - r, dg = pre[o + 1]! - g, db = pre[o + 2]! - b, da = pre[o + 3]! - a;
      const d = dr * dr + dg * dg + db * db + da * da;
      if (d < bestD) { bestD = d; best = i; }
    }
    this.guess[bin] = best;
    return best;
  }
}

const clamp = (v: number): number => (v <= 0 ? 0 : v >= 255 ? 255 : v);
