// The jpeg bench's reference encoder and its "bytes at equal SSIM" search. sharp (native libvips with
// mozjpeg, one thread, no cache: lib/images.ts sets that up) encodes the same input bytes as Shrinkray,
// turned upright and resized the same way; Shrinkray's quality is then searched over 50–95 through the
// API for the lowest one whose SSIM against the input's pixels is at least sharp's q80 SSIM.
import sharp from 'sharp';
import type { CompressOptions, CompressResult } from './compress-client.ts';
import './images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { decodeRgb, ssim, type Rgb } from './ssim.ts';

export const SEARCH_MIN = 50;
export const SEARCH_MAX = 95;

export interface SharpTimed {
  bytes: number;
  ms: number;
  output: Buffer;
  width: number;
  height: number;
}

/** sharp `jpeg({ quality: 80, mozjpeg: true })`: decode, upright, Lanczos3 to `width` (never larger), encode; timed. */
export async function sharpMozjpeg(input: Uint8Array, width?: number): Promise<SharpTimed> {
  const t0 = performance.now();
  let img = sharp(input, { limitInputPixels: false }).rotate();
  if (width !== undefined) img = img.resize({ width, kernel: 'lanczos3', withoutEnlargement: true });
  const { data, info } = await img
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 80, mozjpeg: true })
    .toBuffer({ resolveWithObject: true });
  return { bytes: data.byteLength, ms: performance.now() - t0, output: data, width: info.width, height: info.height };
}

/** An encoder's output at one quality, scored against the reference. */
export interface Scored {
  bytes: number;
  ssim: number;
}

/**
 * The lowest quality in lo–hi whose SSIM reaches `target` (binary search, assuming SSIM rises with
 * quality), or null; `at` scores a quality (callers cache, since the search and its caller revisit).
 */
export async function lowestPassing(
  at: (quality: number) => Promise<Scored>,
  target: number,
  lo: number,
  hi: number,
): Promise<number | null> {
  let found: number | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((await at(mid)).ssim >= target) [found, hi] = [mid, mid - 1];
    else lo = mid + 1;
  }
  return found;
}

/**
 * The bytes at `target` SSIM, interpolated between a passing quality and the one below it: unlike the
 * passing quality's own bytes, this does not jump with where an image's quality steps fall (near
 * quality 80 a step is about 7 % of the bytes).
 */
export function bytesBetween(below: Scored, pass: Scored, target: number): number {
  const t = Math.min(1, Math.max(0, (target - below.ssim) / (pass.ssim - below.ssim || 1)));
  return below.bytes + t * (pass.bytes - below.bytes);
}

export interface Probe {
  quality: number;
  status: number;
  error?: string;
  bytes?: number;
  ssim?: number;
  /** The never-bigger rule answered with the upload's own bytes (its SSIM is then 1). */
  original?: boolean;
  wallMs: number;
}

export interface EqualSsim {
  target: number;
  /** Every request of the search, in the order sent (the q80 one first). */
  probes: Probe[];
  /** The smallest output among the probes with SSIM ≥ target, found by searching for the lowest such quality in SEARCH_MIN–SEARCH_MAX (undefined: not reached or failed). */
  match?: Probe;
  /** Why the search stopped without a match. */
  stopped?: string;
}

export type Send = (options: CompressOptions) => Promise<CompressResult>;

/** One request at `quality`, scored against `reference`; the decoded output is dropped at once. */
export async function probe(
  send: Send,
  input: Uint8Array,
  reference: Rgb,
  quality: number,
  format: 'jpeg' | 'webp' = 'jpeg',
): Promise<Probe> {
  const r = await send({ format, quality });
  const p: Probe = { quality, status: r.status, error: r.error, bytes: r.bytes, wallMs: r.wallMs };
  if (r.output) {
    p.original = r.output.byteLength === input.byteLength && Buffer.from(r.output).equals(Buffer.from(input));
    p.ssim = ssim(reference, await decodeRgb(r.output, reference));
  }
  return p;
}

/**
 * The lowest quality whose SSIM ≥ `target`, assuming SSIM rises with quality. Starts from the q80 probe
 * (`first`) and tries its neighbour first: when Shrinkray and sharp are the same encoder that settles it
 * in one more request. Otherwise bisects: at most 1 + 1 + 1 + 4 requests in all.
 */
export async function equalSsim(
  send: Send,
  input: Uint8Array,
  reference: Rgb,
  target: number,
  first: Probe,
  format: 'jpeg' | 'webp' = 'jpeg',
): Promise<EqualSsim> {
  const result: EqualSsim = { target, probes: [first] };
  const known = new Map<number, Probe>([[first.quality, first]]);
  const at = async (q: number): Promise<Probe> => {
    const cached = known.get(q);
    if (cached) return cached;
    const p = await probe(send, input, reference, q, format);
    known.set(q, p);
    result.probes.push(p);
    return p;
  };
  const pass = (p: Probe) => p.ssim !== undefined && p.ssim >= target;
  if (first.status !== 200) return { ...result, stopped: `q${first.quality} answered ${first.status || 'nothing'}` };
  let bad = SEARCH_MIN - 1; // highest quality known to fail (SEARCH_MIN − 1 stands for "below the range")
  let good: number | undefined; // lowest quality known to pass
  if (pass(first)) {
    good = first.quality;
    const below = await at(first.quality - 1);
    if (below.status !== 200) return { ...result, stopped: `q${below.quality} answered ${below.status || 'nothing'}` };
    if (pass(below)) good = below.quality;
    else bad = below.quality;
  } else {
    bad = first.quality;
    for (const q of [first.quality + 1, SEARCH_MAX]) {
      if (q <= bad) continue;
      const p = await at(q);
      if (p.status !== 200) return { ...result, stopped: `q${q} answered ${p.status || 'nothing'}` };
      if (pass(p)) {
        good = q;
        break;
      }
      bad = q;
    }
    if (good === undefined) return { ...result, stopped: `even q${SEARCH_MAX} scores below the target` };
  }
  while (good - bad > 1) {
    const mid = Math.floor((bad + good) / 2);
    const p = await at(mid);
    if (p.status !== 200)
      return { ...result, match: known.get(good), stopped: `q${mid} answered ${p.status || 'nothing'}; kept q${good}` };
    if (pass(p)) good = mid;
    else bad = mid;
  }
  return { ...result, match: smallestPassing(known, pass) ?? known.get(good) };
}

/**
 * The match is the smallest output among the probes that reach the target: usually the lowest passing
 * quality, but on flat graphics a higher quality can come out smaller (a coarser table spends more on
 * the few coefficients that matter), and the bytes at equal-or-better SSIM are the fewest that get there.
 */
function smallestPassing(known: Map<number, Probe>, pass: (p: Probe) => boolean): Probe | undefined {
  let best: Probe | undefined;
  for (const p of known.values()) if (p.status === 200 && pass(p) && (!best || p.bytes! < best.bytes!)) best = p;
  return best;
}
