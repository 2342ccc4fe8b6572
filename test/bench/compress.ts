// Compression bench: every corpus image through Shrinkray (HTTP, pro key) and through sharp (native
// libvips, in this process), side by side in one run: output bytes, SSIM against the input's pixels,
// time. Then target_kb, and the codecs' WebAssembly memory. One request at a time, sharp interleaved
// with Shrinkray image by image, so both see the same machine; summaries are medians over the corpus.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import sharp from 'sharp';
import { butteraugliSession, BUTTERAUGLI_MAX_MP, findButteraugli } from './lib/butteraugli.ts';
import {
  adminToken,
  compress,
  type CompressOptions,
  type CompressResult,
  type ServerTiming,
} from './lib/compress-client.ts';
import { describeCorpus, loadCorpus, type CorpusImage } from './lib/corpus.ts';
import { sharpEncode, type SharpVariant } from './lib/images.ts';
import {
  largestImage,
  memoryCurve,
  MIXED_REQUESTS,
  mixedRequests,
  type LargestResult,
  type MemoryPoint,
  type MixedResult,
} from './lib/memory.ts';
import type { Service } from './lib/server.ts';
import { checkSsim, decodeRgb, ssim, type Rgb } from './lib/ssim.ts';

/** Enough for medians that mean something, few enough for ~15 minutes on 2 cores. */
export const CORPUS_MAX = Number(process.env.BENCH_CORPUS_MAX ?? 40);

export interface Scored {
  bytes?: number;
  ssim?: number;
  butteraugli?: number;
}
export interface ShrinkrayRun extends Scored {
  status: number;
  error?: string;
  /** The error of a first attempt, retried once (a non-JSON 5xx). */
  retried?: string;
  width?: number;
  height?: number;
  timing: ServerTiming;
  wallMs: number;
}
export interface SharpRun extends Scored {
  ms: number;
}
export interface TargetRun {
  targetKb: number;
  status: number;
  error?: string;
  retried?: string;
  bytes?: number;
  reached?: boolean;
  quality?: number;
  timing: ServerTiming;
}
export type ShrinkrayFormat = 'jpeg' | 'webp' | 'png';

export interface ImageRun {
  name: string;
  type: CorpusImage['type'];
  bytes: number;
  width: number;
  height: number;
  megapixels: number;
  shrinkray: Partial<Record<ShrinkrayFormat, ShrinkrayRun>>;
  sharp: Partial<Record<SharpVariant, SharpRun>>;
  target: Partial<Record<'jpeg' | 'webp', TargetRun>>;
}

export interface CompressBench {
  header: string;
  corpus: { selection: string; description: string; skipped: { name: string; reason: string }[] };
  ssimCheck: Awaited<ReturnType<typeof checkSsim>>;
  butteraugli: string;
  /** Why the Shrinkray side is missing, when it is (e.g. the endpoint answers 501). */
  unavailable?: string;
  images: ImageRun[];
  largest?: LargestResult;
  mixed?: MixedResult;
  curve?: MemoryPoint[];
  /** Memory parts that could not run at all. */
  memoryErrors: string[];
}

const log = (line: string) => console.error(line);

/** Scores an output against the input's pixels; the decoded output is dropped again at once. */
async function score(
  reference: Rgb,
  output: Uint8Array,
  butteraugli?: (out: Rgb) => Promise<number | undefined>,
): Promise<Scored> {
  const decoded = await decodeRgb(output, reference);
  return { bytes: output.byteLength, ssim: ssim(reference, decoded), butteraugli: await butteraugli?.(decoded) };
}

function shrinkrayRun(r: CompressResult): ShrinkrayRun {
  return {
    status: r.status,
    error: r.error,
    retried: r.retried,
    bytes: r.bytes,
    width: r.width,
    height: r.height,
    timing: r.timing,
    wallMs: r.wallMs,
  };
}

/**
 * One image: Shrinkray and sharp take turns, each output scored after all timing is done (scoring
 * 16 MP costs a second of this process's CPU, which must not land inside a timed request).
 */
async function runImage(
  service: Service | undefined,
  image: CorpusImage,
  butteraugliTool: string | undefined,
): Promise<ImageRun> {
  const input = readFileSync(image.path);
  const run: ImageRun = {
    name: image.name,
    type: image.type,
    bytes: image.bytes,
    width: image.width,
    height: image.height,
    megapixels: image.megapixels,
    shrinkray: {},
    sharp: {},
    target: {},
  };
  const outputs: { put: (s: Scored) => void; output: Uint8Array }[] = [];
  const viaShrinkray = async (format: ShrinkrayFormat) => {
    if (!service) return;
    const r = await compress(service.base, service.demoKeys.image_pro!, input, image.name, { format, quality: 80 });
    const entry = (run.shrinkray[format] = shrinkrayRun(r));
    if (r.output) outputs.push({ output: r.output, put: (s) => Object.assign(entry, s) });
    if (r.output && (r.width !== image.width || r.height !== image.height)) {
      entry.error = `output is ${r.width}×${r.height}, input ${image.width}×${image.height}`;
    }
  };
  const viaSharp = async (variant: SharpVariant) => {
    const r = await sharpEncode(input, variant);
    const entry = (run.sharp[variant] = { ms: r.ms, bytes: r.bytes });
    outputs.push({ output: r.output, put: (s) => Object.assign(entry, s) });
  };
  await viaShrinkray('jpeg');
  await viaSharp('mozjpeg');
  await viaSharp('jpeg');
  await viaShrinkray('webp');
  await viaSharp('webp');
  if (image.type === 'png') {
    await viaShrinkray('png');
    await viaSharp('png');
  }
  // target_kb: about half of what q80 gave, so the search has to work for it.
  for (const format of ['jpeg', 'webp'] as const) {
    const q80 = run.shrinkray[format]?.bytes;
    if (!service || q80 === undefined) continue;
    const targetKb = Math.max(1, Math.round(q80 / 1024 / 2));
    const options: CompressOptions = { format, quality: 80, target_kb: targetKb };
    const r = await compress(service.base, service.demoKeys.image_pro!, input, image.name, options);
    run.target[format] = {
      targetKb,
      status: r.status,
      error: r.error,
      retried: r.retried,
      bytes: r.bytes,
      reached: r.targetReached,
      quality: r.quality,
      timing: r.timing,
    };
  }

  const reference = await decodeRgb(input);
  const session =
    butteraugliTool && image.megapixels <= BUTTERAUGLI_MAX_MP
      ? await butteraugliSession(butteraugliTool, reference)
      : undefined;
  try {
    for (const o of outputs) o.put(await score(reference, o.output, session?.score));
  } finally {
    session?.close();
  }
  return run;
}

/** A first request of each format, untimed: codec instantiation and JIT belong to no image. */
async function warmUp(service: Service, image: CorpusImage): Promise<string | undefined> {
  const input = readFileSync(image.path);
  await sharpEncode(input, 'mozjpeg');
  for (const format of ['jpeg', 'webp', 'png'] as const) {
    const r = await compress(service.base, service.demoKeys.image_pro!, input, image.name, { format, quality: 80 });
    if (r.status !== 200)
      return `POST /api/v1/compress (format=${format}) answered ${r.status || 'nothing'}: ${r.error}`;
  }
  return undefined;
}

export async function benchCompress(
  service: Service,
  startCurveService: () => Promise<Service>,
): Promise<CompressBench> {
  if (!(CORPUS_MAX >= 1))
    throw new Error(`BENCH_CORPUS_MAX must be a positive number, not ${process.env.BENCH_CORPUS_MAX}`);
  const ssimCheck = await checkSsim();
  log(
    `compress: SSIM self-check ok (identical 1, ±4 noise ${ssimCheck.noise4.toFixed(3)}, ±16 noise ${ssimCheck.noise16.toFixed(3)})`,
  );
  const corpus = await loadCorpus(CORPUS_MAX);
  const description = describeCorpus(corpus.images);
  log(`compress: corpus ${description}`);
  const tool = findButteraugli();
  const smallest = [...corpus.images].sort((a, b) => a.megapixels - b.megapixels)[0];
  if (!smallest) throw new Error('the corpus is empty');
  const unavailable = await warmUp(service, smallest);
  if (unavailable) log(`compress: Shrinkray side skipped: ${unavailable}`);
  const live = unavailable ? undefined : service;

  const images: ImageRun[] = [];
  for (const [i, image] of corpus.images.entries()) {
    const t0 = performance.now();
    images.push(await runImage(live, image, tool.path));
    log(
      `compress: ${i + 1}/${corpus.images.length} ${image.name} (${image.megapixels.toFixed(1)} MP) ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  }

  const result: CompressBench = {
    header:
      `${corpus.images.length} images (${description}) from ${corpus.selection}. One request at a time, sharp ` +
      `(libvips ${sharp.versions.vips}, 1 thread, no cache) interleaved per image in this Node ${process.version} process on a ` +
      `${cpus().length}-core machine. Medians over the corpus; SSIM: mean over R, G, B of 8×8 windows, stride 4, ` +
      `against the input's pixels (EXIF-oriented, alpha on white). ${tool.note}.`,
    corpus: { selection: corpus.selection, description, skipped: corpus.skipped },
    ssimCheck,
    butteraugli: tool.note,
    unavailable,
    images,
    memoryErrors: [],
  };
  if (!live) return result;

  // Each memory part on its own: one that fails (no operator token, a dead server) is reported, not fatal.
  const attempt = async <T>(part: string, fn: () => Promise<T>): Promise<T | undefined> => {
    log(`compress: memory, ${part}`);
    try {
      return await fn();
    } catch (err) {
      result.memoryErrors.push(`${part}: ${(err as Error).message}`);
      return undefined;
    }
  };
  result.largest = await attempt('largest corpus image', () => largestImage(service, adminToken(), corpus.images));
  // Images the service refused above (over MAX_INPUT_PIXELS) would only add 422s to the mix.
  const accepted = corpus.images.filter((_, i) => !images[i]!.shrinkray.jpeg?.error?.startsWith('image_too_large'));
  result.mixed = await attempt(`${MIXED_REQUESTS} mixed requests`, () =>
    mixedRequests(service, adminToken(), accepted, log),
  );
  result.curve = await attempt('curve (a second service, MAX_INPUT_PIXELS raised)', () =>
    memoryCurve(startCurveService, adminToken, log),
  );
  return result;
}
