// Palette quantisation (our own, MIT-compatible by construction: libimagequant is GPL-3). The pixels
// are counted by exact colour while there are fewer than 196,608 of them (screenshots, graphics), else
// into 2^18 bins (5 bits of each colour, 3 of alpha, premultiplied) keeping each bin's mean and spread;
// a palette is cut from those points by variance-weighted median cut and refined by weighted k-means. The quality of a palette is its mean squared error, mapped to
// 0–100 with pngquant's own curve, so `quality=80` means what it means to pngquant users; the fewest
// colours that reach it are found by a binary search on the histogram, before any pixel is remapped.
import { giveWay } from '../../../wasm/give-way.ts';

/** Histogram bins: 5 bits per colour channel, 3 bits of alpha. */
export const BINS = 1 << 18;
export const binOf = (r: number, g: number, b: number, a: number): number =>
  ((r >> 3) << 13) | ((g >> 3) << 8) | ((b >> 3) << 3) | (a >> 5);
/** k-means passes while searching the colour count, and for the palette finally used. */
const SEARCH_PASSES = 1;
const FINAL_PASSES = 4;

/** Exact colours counted before the histogram falls back to bins (a screenshot has a few thousand). */
const EXACT_CAPACITY = 1 << 18;
const EXACT_LIMIT = (EXACT_CAPACITY * 3) / 4;

/** Bytes the histogram may hold (for the memory plan): the exact table, then the bins. */
export const HISTOGRAM_BYTES = EXACT_CAPACITY * 8 + BINS * (4 + 5 * 8);

/**
 * Counts pixels. Exact colours first, in an open-addressing table, so that a screenshot's palette can
 * hold its real colours (text antialiasing included); past EXACT_LIMIT distinct colours (photographs)
 * the counts move to the bins, which keep each bin's mean and spread. Colours are premultiplied by
 * alpha: fully transparent pixels are all one colour.
 */
export class Histogram {
  private keys: Uint32Array | null = new Uint32Array(EXACT_CAPACITY);
  private counts: Uint32Array | null = new Uint32Array(EXACT_CAPACITY);
  private distinct = 0;
  private binCount: Uint32Array | null = null;
  /** Per bin: sums of r, g, b, a and of the squared values (premultiplied). */
  private sums: Float64Array | null = null;
  pixels = 0;

  addRow(rgba: Uint8Array, width: number): void {
    this.pixels += width;
    if (this.keys) {
      const keys = this.keys;
      const counts = this.counts!;
      const aligned = rgba.byteOffset % 4 === 0;
      const view = aligned ? new Uint32Array(rgba.buffer, rgba.byteOffset, width) : new Uint32Array(0);
      for (let x = 0; x < width; x++) {
        // Key 0 means an empty slot: every fully transparent pixel is counted as 0x01000000 - 1's neighbour, 1.
        let key = aligned
          ? view[x]!
          : (rgba[x * 4]! | (rgba[x * 4 + 1]! << 8) | (rgba[x * 4 + 2]! << 16) | (rgba[x * 4 + 3]! << 24)) >>> 0;
        if (key >>> 24 === 0) key = 1;
        let slot = Math.imul(key, 0x9e3779b1) >>> 14;
        for (;;) {
          const k = keys[slot]!;
          if (k === key) {
            counts[slot]!++;
            break;
          }
          if (k === 0) {
            keys[slot] = key;
            counts[slot] = 1;
            if (++this.distinct > EXACT_LIMIT) {
              this.toBins();
              this.binRow(rgba, x + 1, width);
              return;
            }
            break;
          }
          slot = (slot + 1) & (EXACT_CAPACITY - 1);
        }
      }
      return;
    }
    this.binRow(rgba, 0, width);
  }

  private toBins(): void {
    this.binCount = new Uint32Array(BINS);
    this.sums = new Float64Array(BINS * 5);
    const keys = this.keys!;
    const counts = this.counts!;
    this.keys = null;
    this.counts = null;
    for (let i = 0; i < EXACT_CAPACITY; i++) {
      if (keys[i] === 0) continue;
      const [r, g, b, a] = unkey(keys[i]!);
      this.addBinned(r, g, b, a, counts[i]!);
    }
  }

  private binRow(rgba: Uint8Array, from: number, width: number): void {
    for (let x = from; x < width; x++)
      this.addBinned(rgba[x * 4]!, rgba[x * 4 + 1]!, rgba[x * 4 + 2]!, rgba[x * 4 + 3]!, 1);
  }

  private addBinned(r8: number, g8: number, b8: number, a: number, n: number): void {
    const k = a / 255;
    const r = r8 * k,
      g = g8 * k,
      b = b8 * k;
    const bin = binOf(r, g, b, a);
    this.binCount![bin]! += n;
    const s = bin * 5;
    const sums = this.sums!;
    sums[s]! += r * n;
    sums[s + 1]! += g * n;
    sums[s + 2]! += b * n;
    sums[s + 3]! += a * n;
    sums[s + 4]! += (r * r + g * g + b * b + a * a) * n;
  }

  /** The colours as weighted points (premultiplied), and the error no palette of these points can remove. */
  points(): Points {
    if (this.keys) {
      const colour = new Float32Array(this.distinct * 4);
      const weight = new Float64Array(this.distinct);
      for (let i = 0, p = 0; i < EXACT_CAPACITY; i++) {
        if (this.keys[i] === 0) continue;
        const [r, g, b, a] = unkey(this.keys[i]!);
        const k = a / 255;
        colour.set([r * k, g * k, b * k, a], p * 4);
        weight[p++] = this.counts![i]!;
      }
      return { colour, weight, count: this.distinct, total: this.pixels, innerError: 0 };
    }
    const count = this.binCount!;
    const sums = this.sums!;
    let n = 0;
    for (let i = 0; i < BINS; i++) if (count[i]) n++;
    const colour = new Float32Array(n * 4);
    const weight = new Float64Array(n);
    let inner = 0;
    for (let i = 0, p = 0; i < BINS; i++) {
      const c = count[i]!;
      if (!c) continue;
      const s = i * 5;
      let norm = 0;
      for (let ch = 0; ch < 4; ch++) {
        const mean = sums[s + ch]! / c;
        colour[p * 4 + ch] = mean;
        norm += mean * mean;
      }
      inner += Math.max(0, sums[s + 4]! - c * norm);
      weight[p++] = c;
    }
    return { colour, weight, count: n, total: this.pixels, innerError: inner };
  }
}

/** RGBA from a table key (little-endian RGBA bytes); key 1 is the transparent colour. */
const unkey = (key: number): [number, number, number, number] =>
  key === 1 ? [0, 0, 0, 0] : [key & 255, (key >>> 8) & 255, (key >>> 16) & 255, key >>> 24];

export interface Points {
  colour: Float32Array;
  weight: Float64Array;
  count: number;
  total: number;
  /** Sum of squared distances of pixels to their bin's mean: error no palette of bins can remove. */
  innerError: number;
}

export interface Palette {
  /** Premultiplied RGBA as floats, 4 per entry. */
  colours: Float32Array;
  size: number;
  /** Measured on the histogram: mean squared error per pixel (0–255 units, summed over RGBA). */
  mse: number;
}

/**
 * pngquant's quality scale: libimagequant's quality_to_mse curve, whose MSE is on its own internal
 * colours (0–1, gamma-weighted). Ours is on premultiplied 0–255 samples summed over RGBA; the factor was
 * calibrated on pngquant 2.17's own outputs (a rendered page, the docs page, a corpus graphic at
 * --quality 65-80, 0-90 and 0-99 give MSEs of 3.1–5.2, 1.6–2.2 and 0.1–0.4 in our units), so that
 * quality=80 asks about as much of a palette here as it does of pngquant.
 */
const SCALE = (255 * 255) / 8;
export function qualityToMse(quality: number): number {
  if (quality >= 100) return 0;
  const fudge = Math.max(0, 0.016 / (0.001 + quality) - 0.001);
  return (fudge + (2.5 / (210 + quality) ** 1.2) * ((100.1 - quality) / 100)) * SCALE;
}

export function mseToQuality(mse: number): number {
  for (let q = 100; q > 0; q--) if (qualityToMse(q) >= mse) return q;
  return 0;
}

/**
 * The palette of at most `maxColours` with the fewest colours whose error reaches `quality` (or
 * `maxColours` colours when none does).
 */
export async function choosePalette(points: Points, maxColours: number, quality: number): Promise<Palette> {
  const target = qualityToMse(quality);
  const limit = Math.min(maxColours, Math.max(points.count, 1));
  let best = await buildPalette(points, limit, SEARCH_PASSES);
  if (best.mse > target || limit <= 2) return buildPalette(points, limit, FINAL_PASSES);
  let lo = 2;
  let hi = limit;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const p = await buildPalette(points, mid, SEARCH_PASSES);
    if (p.mse <= target) {
      hi = mid;
      best = p;
    } else lo = mid + 1;
  }
  return buildPalette(points, hi, FINAL_PASSES);
}

/**
 * Median cut (the box with the largest weighted variance is split at its weighted median) and k-means,
 * giving way to other requests after the cut and after each pass (a photo's histogram has some 100,000
 * points, and a pass compares each with every centre).
 */
export async function buildPalette(points: Points, size: number, passes: number): Promise<Palette> {
  const { colour, weight, count } = points;
  const order = new Int32Array(count).map((_, i) => i);
  interface Box {
    start: number;
    end: number;
    score: number;
    axis: number;
  }
  const boxes: Box[] = [];
  const measure = (start: number, end: number): Box => {
    const sum = [0, 0, 0, 0],
      sq = [0, 0, 0, 0];
    let w = 0;
    for (let i = start; i < end; i++) {
      const p = order[i]!;
      const pw = weight[p]!;
      w += pw;
      for (let c = 0; c < 4; c++) {
        const v = colour[p * 4 + c]!;
        sum[c]! += v * pw;
        sq[c]! += v * v * pw;
      }
    }
    let axis = 0,
      best = -1,
      total = 0;
    for (let c = 0; c < 4; c++) {
      const variance = w > 0 ? sq[c]! - (sum[c]! * sum[c]!) / w : 0;
      total += variance;
      if (variance > best) {
        best = variance;
        axis = c;
      }
    }
    return { start, end, score: end - start > 1 ? total : -1, axis };
  };
  if (count > 0) boxes.push(measure(0, count));
  while (boxes.length < size) {
    let pick = -1;
    for (let i = 0; i < boxes.length; i++)
      if (boxes[i]!.score > 0 && (pick < 0 || boxes[i]!.score > boxes[pick]!.score)) pick = i;
    if (pick < 0) break;
    const box = boxes[pick]!;
    const slice = Array.from(order.subarray(box.start, box.end)).sort(
      (a, b) => colour[a * 4 + box.axis]! - colour[b * 4 + box.axis]!,
    );
    order.set(slice, box.start);
    let half = 0;
    for (let i = box.start; i < box.end; i++) half += weight[order[i]!]!;
    half /= 2;
    let split = box.start + 1;
    for (let acc = 0, i = box.start; i < box.end - 1; i++) {
      acc += weight[order[i]!]!;
      split = i + 1;
      if (acc >= half) break;
    }
    boxes.splice(pick, 1, measure(box.start, split), measure(split, box.end));
  }
  const k = Math.max(1, boxes.length);
  const centres = new Float32Array(k * 4);
  boxes.forEach((box, b) => {
    let w = 0;
    const sum = [0, 0, 0, 0];
    for (let i = box.start; i < box.end; i++) {
      const p = order[i]!;
      w += weight[p]!;
      for (let c = 0; c < 4; c++) sum[c]! += colour[p * 4 + c]! * weight[p]!;
    }
    for (let c = 0; c < 4; c++) centres[b * 4 + c] = w > 0 ? sum[c]! / w : 0;
  });
  let mse = 0;
  // In give-way.ts's pixels of row work: a comparison of a point with a centre costs about a tenth of one.
  const passWork = (count * k) / 10;
  await giveWay(count);
  for (let pass = 0; pass <= passes; pass++) {
    const acc = new Float64Array(k * 5);
    let error = 0;
    for (let p = 0; p < count; p++) {
      const [nearest, d] = nearestOf(
        centres,
        k,
        colour[p * 4]!,
        colour[p * 4 + 1]!,
        colour[p * 4 + 2]!,
        colour[p * 4 + 3]!,
      );
      const w = weight[p]!;
      error += d * w;
      for (let c = 0; c < 4; c++) acc[nearest * 5 + c]! += colour[p * 4 + c]! * w;
      acc[nearest * 5 + 4]! += w;
    }
    mse = (error + points.innerError) / Math.max(1, points.total);
    await giveWay(passWork);
    if (pass === passes) break;
    for (let i = 0; i < k; i++) {
      const w = acc[i * 5 + 4]!;
      if (w > 0) for (let c = 0; c < 4; c++) centres[i * 4 + c] = acc[i * 5 + c]! / w;
    }
  }
  return { colours: centres, size: k, mse };
}

/**
 * How far apart two premultiplied colours look: per channel, the larger of their difference composited
 * on black (the premultiplied values' own) and on white (colour minus alpha), squared and summed — the
 * measure libimagequant uses. Plain RGBA distance let alpha count as one channel of four, so a palette
 * that traded alpha for colour looked right on black and wrong on white; here an alpha error counts
 * wherever it shows. For opaque colours it is the RGB distance. Its square root is a norm, so the
 * triangle inequality that Remapper's shortcuts rely on holds.
 */
export function colourDistance(
  r0: number,
  g0: number,
  b0: number,
  a0: number,
  r1: number,
  g1: number,
  b1: number,
  a1: number,
): number {
  const da = a0 - a1;
  const dr = r0 - r1,
    dg = g0 - g1,
    db = b0 - b1;
  const wr = dr - da,
    wg = dg - da,
    wb = db - da;
  return Math.max(dr * dr, wr * wr) + Math.max(dg * dg, wg * wg) + Math.max(db * db, wb * wb);
}

/** The nearest entry by colourDistance, and that distance. */
export function nearestOf(
  colours: Float32Array,
  size: number,
  r: number,
  g: number,
  b: number,
  a: number,
): [number, number] {
  let best = 0;
  let bestD = Infinity;
  for (let i = 0, o = 0; i < size; i++, o += 4) {
    const d = colourDistance(colours[o]!, colours[o + 1]!, colours[o + 2]!, colours[o + 3]!, r, g, b, a);
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  }
  return [best, bestD];
}
