// Palette quantisation (our own, MIT-compatible by construction: libimagequant is GPL-3). The pixels
// are counted into a histogram of 2^18 bins (5 bits of each colour, 3 of alpha, premultiplied), each
// bin keeping its exact mean and spread; a palette is cut from the bins by variance-weighted median
// cut and refined by weighted k-means. The quality of a palette is its mean squared error, mapped to
// 0–100 with pngquant's own curve, so `quality=80` means what it means to pngquant users; the fewest
// colours that reach it are found by a binary search on the histogram, before any pixel is remapped.

/** Histogram bins: 5 bits per colour channel, 3 bits of alpha. */
export const BINS = 1 << 18;
export const binOf = (r: number, g: number, b: number, a: number): number => ((r >> 3) << 13) | ((g >> 3) << 8) | ((b >> 3) << 3) | (a >> 5);
/** k-means passes while searching the colour count, and for the palette finally used. */
const SEARCH_PASSES = 1;
const FINAL_PASSES = 4;

/** Bytes the histogram holds (for the memory plan). */
export const HISTOGRAM_BYTES = BINS * (4 + 5 * 8);

/** Counts pixels, premultiplied by alpha: fully transparent pixels are all one colour. */
export class Histogram {
  private readonly count = new Uint32Array(BINS);
  /** Per bin: sums of r, g, b, a and of the squared values (premultiplied). */
  private readonly sums = new Float64Array(BINS * 5);
  pixels = 0;

  addRow(rgba: Uint8Array, width: number): void {
    const { count, sums } = this;
    for (let x = 0; x < width * 4; x += 4) {
      const a = rgba[x + 3]!;
      const k = a / 255;
      const r = rgba[x]! * k, g = rgba[x + 1]! * k, b = rgba[x + 2]! * k;
      const bin = binOf(r, g, b, a);
      count[bin]!++;
      const s = bin * 5;
      sums[s]! += r; sums[s + 1]! += g; sums[s + 2]! += b; sums[s + 3]! += a;
      sums[s + 4]! += r * r + g * g + b * b + a * a;
    }
    this.pixels += width;
  }

  /** The non-empty bins as weighted points (mean colour), and the variance inside the bins. */
  points(): Points {
    let n = 0;
    for (let i = 0; i < BINS; i++) if (this.count[i]) n++;
    const colour = new Float32Array(n * 4);
    const weight = new Float64Array(n);
    let inner = 0;
    for (let i = 0, p = 0; i < BINS; i++) {
      const c = this.count[i]!;
      if (!c) continue;
      const s = i * 5;
      let norm = 0;
      for (let ch = 0; ch < 4; ch++) {
        const mean = this.sums[s + ch]! / c;
        colour[p * 4 + ch] = mean;
        norm += mean * mean;
      }
      inner += Math.max(0, this.sums[s + 4]! - c * norm);
      weight[p++] = c;
    }
    return { colour, weight, count: n, total: this.pixels, innerError: inner };
  }
}

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
 * pngquant's quality scale (libimagequant's quality_to_mse): its MSE is on 0–1 samples; ours on 0–255
 * summed over the channels, which the factor converts.
 */
const SCALE = 255 * 255;
export function qualityToMse(quality: number): number {
  if (quality >= 100) return 0;
  const fudge = Math.max(0, 0.016 / (0.001 + quality) - 0.001);
  return (fudge + (2.5 / Math.pow(210 + quality, 1.2)) * ((100.1 - quality) / 100)) * SCALE;
}

export function mseToQuality(mse: number): number {
  for (let q = 100; q > 0; q--) if (qualityToMse(q) >= mse) return q;
  return 0;
}

/**
 * The palette of at most `maxColours` with the fewest colours whose error reaches `quality` (or
 * `maxColours` colours when none does).
 */
export function choosePalette(points: Points, maxColours: number, quality: number): Palette {
  const target = qualityToMse(quality);
  const limit = Math.min(maxColours, Math.max(points.count, 1));
  let best = buildPalette(points, limit, SEARCH_PASSES);
  if (best.mse > target || limit <= 2) return buildPalette(points, limit, FINAL_PASSES);
  let lo = 2;
  let hi = limit;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const p = buildPalette(points, mid, SEARCH_PASSES);
    if (p.mse <= target) {
      hi = mid;
      best = p;
    } else lo = mid + 1;
  }
  return buildPalette(points, hi, FINAL_PASSES);
}

/** Median cut (the box with the largest weighted variance is split at its weighted median) and k-means. */
export function buildPalette(points: Points, size: number, passes: number): Palette {
  const { colour, weight, count } = points;
  const order = new Int32Array(count).map((_, i) => i);
  interface Box { start: number; end: number; score: number; axis: number }
  const boxes: Box[] = [];
  const measure = (start: number, end: number): Box => {
    const sum = [0, 0, 0, 0], sq = [0, 0, 0, 0];
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
    let axis = 0, best = -1, total = 0;
    for (let c = 0; c < 4; c++) {
      const variance = w > 0 ? sq[c]! - (sum[c]! * sum[c]!) / w : 0;
      total += variance;
      if (variance > best) { best = variance; axis = c; }
    }
    return { start, end, score: end - start > 1 ? total : -1, axis };
  };
  if (count > 0) boxes.push(measure(0, count));
  while (boxes.length < size) {
    let pick = -1;
    for (let i = 0; i < boxes.length; i++) if (boxes[i]!.score > 0 && (pick < 0 || boxes[i]!.score > boxes[pick]!.score)) pick = i;
    if (pick < 0) break;
    const box = boxes[pick]!;
    const slice = Array.from(order.subarray(box.start, box.end)).sort((a, b) => colour[a * 4 + box.axis]! - colour[b * 4 + box.axis]!);
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
  for (let pass = 0; pass <= passes; pass++) {
    const acc = new Float64Array(k * 5);
    let error = 0;
    for (let p = 0; p < count; p++) {
      const [nearest, d] = nearestOf(centres, k, colour[p * 4]!, colour[p * 4 + 1]!, colour[p * 4 + 2]!, colour[p * 4 + 3]!);
      const w = weight[p]!;
      error += d * w;
      for (let c = 0; c < 4; c++) acc[nearest * 5 + c]! += colour[p * 4 + c]! * w;
      acc[nearest * 5 + 4]! += w;
    }
    mse = (error + points.innerError) / Math.max(1, points.total);
    if (pass === passes) break;
    for (let i = 0; i < k; i++) {
      const w = acc[i * 5 + 4]!;
      if (w > 0) for (let c = 0; c < 4; c++) centres[i * 4 + c] = acc[i * 5 + c]! / w;
    }
  }
  return { colours: centres, size: k, mse };
}

/** The nearest entry by squared distance, and that distance. */
export function nearestOf(colours: Float32Array, size: number, r: number, g: number, b: number, a: number): [number, number] {
  let best = 0;
  let bestD = Infinity;
  for (let i = 0, o = 0; i < size; i++, o += 4) {
    const dr = colours[o]! - r, dg = colours[o + 1]! - g, db = colours[o + 2]! - b, da = colours[o + 3]! - a;
    const d = dr * dr + dg * dg + db * db + da * da;
    if (d < bestD) { bestD = d; best = i; }
  }
  return [best, bestD];
}
