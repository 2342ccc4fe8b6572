// JPEG bench: large camera-sized JPEGs (12, 24, 48 and 100 MP, baseline and progressive) and the corpus
// through POST /api/v1/compress and through sharp in this process, side by side in one run. Per request:
// status, output, wall time and the peak resident-set growth of the service's workerd processes, read by
// the kernel (lib/rss.ts), not reported by the Worker. Then bytes at equal SSIM against sharp's mozjpeg
// q80 (the 12, 24 and 48 MP baseline photos, whose targets docs/benchmarks.md names, and the corpus), and time
// ratios. One request at a time; a failed case is a row, never the end of the run.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import sharp from 'sharp';
import { alive, compress, type CompressOptions, type CompressResult } from './lib/compress-client.ts';
import { describeCorpus, loadCorpus, type CorpusImage } from './lib/corpus.ts';
import { INPUT_SIZES, jpegInputs, SOURCE_PHOTO, type JpegInput } from './lib/jpeg-inputs.ts';
import { equalSsim, sharpMozjpeg, type EqualSsim, type Probe, type Send } from './lib/jpeg-quality.ts';
import { median } from './lib/load.ts';
import { measured, type MeasuredCompression } from './lib/memory.ts';
import { gcWorker, residentBytes, withRssPeak, type RssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';
import { checkSsim, decodeRgb, ssim } from './lib/ssim.ts';

/** The corpus part's cap (BENCH_CORPUS_MAX, as for the compress bench, but 12 by default: each image is up to 9 requests). */
export const JPEG_CORPUS_MAX = Number(process.env.BENCH_CORPUS_MAX ?? 12);
/** Past this many seconds of the bench, no further corpus image is started (2 shared cores; ~15 minutes in all). */
export const JPEG_BUDGET_S = Number(process.env.BENCH_JPEG_BUDGET_S ?? 720);
/** Timed runs per case: the median is reported; large inputs once (each is seconds of WASM). */
export const repeatsFor = (megapixels: number) => (megapixels <= 13 ? 3 : megapixels <= 25 ? 2 : 1);
export const SMALL_WIDTH = 1280;
/** Shrinkray's quality in the timed requests (sharp's reference is q80 too): the equal-SSIM search starts from it. */
export const START_QUALITY = 80;
/** Timed requests per corpus image and size (interleaved with sharp's): the time table takes their medians. */
export const TIME_SAMPLES = Number(process.env.BENCH_JPEG_TIME_SAMPLES ?? 3);

/** BENCH_JPEG_GC=0: no forced GC of the Worker's isolate before a memory baseline (lib/inspector-gc.ts). */
const FORCE_GC = process.env.BENCH_JPEG_GC !== '0';
const log = (line: string) => console.error(line);

/** A timed request (wallMs: the client's round trip; serverMs: Server-Timing's total) beside sharp's. */
export interface CaseRun extends Omit<MeasuredCompression, 'label'> {
  retried?: string;
  sharpMs: number;
  sharpBytes: number;
}

export interface CaseResult {
  label: string;
  megapixels: number;
  inputWidth: number;
  inputHeight: number;
  inputQuality: number;
  inputBytes: number;
  progressive: boolean;
  width?: number;
  runs: CaseRun[];
}

export interface TimedPair {
  status: number;
  error?: string;
  wallMs: number;
  sharpMs: number;
  bytes?: number;
  sharpBytes: number;
}

export interface ImageQuality {
  name: string;
  source: 'synthetic' | 'corpus';
  type: string;
  megapixels: number;
  inputBytes: number;
  sharp: { bytes: number; ssim: number };
  search: EqualSsim;
  full: TimedPair;
  small: TimedPair;
}

export interface JpegBench {
  header: string;
  machine: { cores: number; cpu: string; node: string; sharp: string; vips: string; date: string };
  inputs: {
    label: string;
    width: number;
    height: number;
    quality: number;
    baselineBytes: number;
    progressiveBytes: number;
    tooBig: { quality: number; bytes: number }[];
  }[];
  corpus: { selection: string; description: string };
  warmUp?: { status: number; error?: string; wallMs: number };
  /** Each workerd's RSS after the warm-up (and a forced GC): what the service holds idle. */
  residentIdle: ReturnType<typeof residentBytes>;
  cases: CaseResult[];
  quality: ImageQuality[];
  /** Corpus images left out for the time budget, service restarts, parts that failed. */
  notes: string[];
  /** What each workerd held after the last request (pid, role, RSS). */
  residentAfter: ReturnType<typeof residentBytes>;
}

/** The service, restarted when a request killed it (status 0 and no answer any more). */
class Live {
  service: Service;
  private readonly start: () => Promise<Service>;
  private readonly notes: string[];
  constructor(service: Service, start: () => Promise<Service>, notes: string[]) {
    this.service = service;
    this.start = start;
    this.notes = notes;
  }
  /** One request; with `measure`, the workerds' peak RSS growth too (after a forced GC unless BENCH_JPEG_GC=0). */
  async send(
    input: Uint8Array,
    name: string,
    options: CompressOptions,
    measure = false,
  ): Promise<{ result: CompressResult; rss?: RssPeak }> {
    const key = this.service.demoKeys.image_pro!;
    const request = () => compress(this.service.base, key, input, name, options);
    const out = measure
      ? await withRssPeak(this.service.pid, request, FORCE_GC)
      : { result: await request(), rss: undefined };
    if (out.result.status === 0 && !(await alive(this.service.base))) {
      this.notes.push(`the service died on ${name} ${JSON.stringify(options)} (${out.result.error}); restarted`);
      log(`jpeg: the service died (${out.result.error}); restarting it`);
      await this.service.stop();
      this.service = await this.start();
    }
    return out;
  }
}

const opts = (width?: number): CompressOptions => ({
  format: 'jpeg',
  quality: START_QUALITY,
  ...(width === undefined ? {} : { width }),
});
const brief = (r: CompressResult) =>
  r.status === 200 ? `${r.bytes} B ${r.width}×${r.height}` : `${r.status || 'no answer'} ${r.error ?? ''}`;

async function runCase(live: Live, input: JpegInput, width: number | undefined): Promise<CaseResult> {
  const bytes = readFileSync(input.path);
  const label = `${input.size.label} ${input.progressive ? 'progressive' : 'baseline'} q${input.quality}${width === undefined ? '' : ` → width=${width}`}`;
  const c: CaseResult = {
    label,
    megapixels: input.megapixels,
    inputWidth: input.size.width,
    inputHeight: input.size.height,
    inputQuality: input.quality,
    inputBytes: input.bytes,
    progressive: input.progressive,
    width,
    runs: [],
  };
  for (let i = 0; i < repeatsFor(input.megapixels); i++) {
    const { result: r, rss: peak } = await live.send(bytes, 'photo.jpg', opts(width), true);
    const rss = peak ?? { processes: [] };
    const s = await sharpMozjpeg(bytes, width);
    c.runs.push({
      ...measured(r, rss),
      retried: r.retried,
      sharpMs: s.ms,
      sharpBytes: s.bytes,
    });
    log(
      `jpeg: ${label}: ${brief(r)}, ${r.wallMs.toFixed(0)} ms (sharp ${s.ms.toFixed(0)} ms), RSS +${((rss.maxGrowthBytes ?? NaN) / 1048576).toFixed(1)} MB`,
    );
  }
  return c;
}

/** One image of the quality part: timed pairs first (full size, then width=1280), then scoring and the search. */
async function runQuality(
  live: Live,
  name: string,
  source: ImageQuality['source'],
  type: string,
  path: string,
): Promise<ImageQuality> {
  const input = readFileSync(path);
  const file = name.split('/').at(-1)!;
  const send: Send = async (options) => (await live.send(input, file, options)).result;
  // TIME_SAMPLES rounds of: Shrinkray full size, sharp full size, Shrinkray width=1280, sharp width=1280.
  const rounds: {
    full: { result: CompressResult };
    sharpFull: Awaited<ReturnType<typeof sharpMozjpeg>>;
    small: { result: CompressResult };
    sharpSmall: Awaited<ReturnType<typeof sharpMozjpeg>>;
  }[] = [];
  for (let i = 0; i < Math.max(1, TIME_SAMPLES); i++) {
    const full = await live.send(input, file, opts());
    const sharpFull = await sharpMozjpeg(input);
    const small = await live.send(input, file, opts(SMALL_WIDTH));
    const sharpSmall = await sharpMozjpeg(input, SMALL_WIDTH);
    rounds.push({ full, sharpFull, small, sharpSmall });
  }
  const { full, sharpFull } = rounds[0]!;
  const pair = (kind: 'full' | 'small'): TimedPair => {
    const first = rounds[0]![kind].result;
    const sharpOf = (r: (typeof rounds)[number]) => (kind === 'full' ? r.sharpFull : r.sharpSmall);
    return {
      status: first.status,
      error: first.error,
      bytes: first.bytes,
      sharpBytes: sharpOf(rounds[0]!).bytes,
      wallMs: median(rounds.map((r) => r[kind].result.wallMs)),
      sharpMs: median(rounds.map((r) => sharpOf(r).ms)),
    };
  };

  const reference = await decodeRgb(input);
  const sharpSsim = ssim(reference, await decodeRgb(sharpFull.output, reference));
  // The timed q80 request is the search's first probe; scored here, after all timing of this image.
  const first: Probe = {
    quality: START_QUALITY,
    status: full.result.status,
    error: full.result.error,
    bytes: full.result.bytes,
    wallMs: full.result.wallMs,
  };
  if (full.result.output) {
    first.original = Buffer.from(full.result.output).equals(input);
    first.ssim = ssim(reference, await decodeRgb(full.result.output, reference));
  }
  const search = await equalSsim(send, input, reference, sharpSsim, first);
  const megapixels = (reference.width * reference.height) / 1e6;
  const m = search.match;
  log(
    `jpeg: ${name} (${megapixels.toFixed(1)} MP): sharp ${sharpFull.bytes} B SSIM ${sharpSsim.toFixed(4)}; ` +
      `q80 ${brief(full.result)} SSIM ${first.ssim?.toFixed(4) ?? '–'}; ` +
      (m
        ? `q${m.quality} ${m.bytes} B SSIM ${m.ssim!.toFixed(4)} (${search.probes.length} requests)`
        : `no match: ${search.stopped}`),
  );
  return {
    name,
    source,
    type,
    megapixels,
    inputBytes: input.byteLength,
    sharp: { bytes: sharpFull.bytes, ssim: sharpSsim },
    search,
    full: pair('full'),
    small: pair('small'),
  };
}

export async function benchJpeg(start: () => Promise<Service>): Promise<JpegBench> {
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  if (!(JPEG_CORPUS_MAX >= 1))
    throw new Error(`BENCH_CORPUS_MAX must be a positive number, not ${process.env.BENCH_CORPUS_MAX}`);
  await checkSsim();
  const sets = [];
  for (const size of INPUT_SIZES) sets.push(await jpegInputs(size, log));
  const corpus = await loadCorpus(JPEG_CORPUS_MAX);
  const description = describeCorpus(corpus.images);
  const notes: string[] = [];
  const machine = {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? '?',
    node: process.version,
    sharp: sharp.versions.sharp ?? '?',
    vips: sharp.versions.vips,
    date: new Date().toISOString().slice(0, 10),
  };
  const result: JpegBench = {
    header: '',
    machine,
    inputs: sets.map((s) => ({
      label: s.baseline.size.label,
      width: s.baseline.size.width,
      height: s.baseline.size.height,
      quality: s.baseline.quality,
      baselineBytes: s.baseline.bytes,
      progressiveBytes: s.progressive.bytes,
      tooBig: s.tooBig,
    })),
    corpus: { selection: corpus.selection, description },
    cases: [],
    quality: [],
    notes,
    residentIdle: [],
    residentAfter: [],
  };
  const live = new Live(await start(), start, notes);
  try {
    if (live.service.pid === undefined) notes.push('the service has no pid: no memory measured');
    // Warm-up: codec instantiation, JIT and sharp's first load belong to no case.
    const phone = sets[0]!.baseline;
    const warm = await live.send(readFileSync(phone.path), 'photo.jpg', opts());
    await sharpMozjpeg(readFileSync(phone.path));
    result.warmUp = { status: warm.result.status, error: warm.result.error, wallMs: warm.result.wallMs };
    log(`jpeg: warm-up ${brief(warm.result)} in ${warm.result.wallMs.toFixed(0)} ms`);
    if (live.service.pid !== undefined) {
      if (FORCE_GC) {
        const gc = await gcWorker(live.service.pid);
        if (gc.gcError)
          notes.push(`forced GC unavailable, baselines may hold earlier requests' garbage: ${gc.gcError}`);
      }
      result.residentIdle = residentBytes(live.service.pid);
    }

    for (const set of sets) {
      for (const input of [set.baseline, set.progressive]) {
        const widths = input.size.width === 4032 ? [undefined, 2048, SMALL_WIDTH] : [undefined, 2048];
        for (const width of widths) result.cases.push(await runCase(live, input, width));
      }
    }
    log(`jpeg: cases done at ${elapsed().toFixed(0)} s`);

    const quality: { name: string; source: ImageQuality['source']; type: string; path: string }[] = [
      ...sets.slice(0, 3).map((s) => ({
        name: `${s.baseline.size.label} baseline q${s.baseline.quality} (synthetic)`,
        source: 'synthetic' as const,
        type: 'jpeg',
        path: s.baseline.path,
      })),
      ...corpus.images.map((i: CorpusImage) => ({
        name: i.name,
        source: 'corpus' as const,
        type: i.type,
        path: i.path,
      })),
    ];
    for (const [i, q] of quality.entries()) {
      if (elapsed() > JPEG_BUDGET_S) {
        notes.push(
          `time budget (${JPEG_BUDGET_S} s) spent: ${quality.length - i} of ${quality.length} quality images left out (${quality
            .slice(i)
            .map((x) => x.name)
            .join(', ')})`,
        );
        break;
      }
      try {
        result.quality.push(await runQuality(live, q.name, q.source, q.type, q.path));
      } catch (err) {
        notes.push(`${q.name}: ${(err as Error).message}`);
      }
    }
    if (live.service.pid !== undefined) result.residentAfter = residentBytes(live.service.pid);
  } finally {
    await live.service.stop();
  }
  result.header =
    `Machine: ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, sharp ${machine.sharp} (libvips ${machine.vips}, 1 thread, no cache), ${machine.date}. ` +
    `Shrinkray under wrangler dev with MAX_INPUT_PIXELS 100,000,000${process.env.BENCH_JPEG_VARS ? ` and ${process.env.BENCH_JPEG_VARS}` : ''}, one request at a time, pro key; sharp interleaved case by case in the bench's process. ` +
    `Inputs: ${SOURCE_PHOTO.name} (corpus) resized with Lanczos3 (cover) plus a ±3-level luminance grain, written by libjpeg-turbo 4:2:0 (quality per size below). ` +
    `Time: client wall ms (upload, work, download) vs sharp decode + rotate + resize + mozjpeg encode in-process. ` +
    `Peak RSS growth: VmHWM − VmRSS of the workerd process that grew most (the Worker's runtime), read from /proc; clear_refs=5 and the VmRSS baseline just before the request, ` +
    (FORCE_GC
      ? `after a full GC of the Worker's isolate forced through its inspector (a discarded heap snapshot), so no earlier request's garbage is in the baseline; `
      : 'no forced GC (BENCH_JPEG_GC=0); ') +
    `1 MB = 1,048,576 bytes. ` +
    `SSIM: lib/ssim.ts at full resolution (no downscaling), R, G, B, 8×8 windows stride 4, against the input's pixels. ` +
    `Corpus: ${corpus.images.length} images (${description}). Bench time ${elapsed().toFixed(0)} s.`;
  return result;
}
