// `npm run bench -- transform`: the transformations (issue 48's Figures) on the camera photos
// (../shared/corpus/camera/, read in place), side by side with sharp in one run, one request or one sharp
// call at a time (sharp on one thread, lib/images.ts):
// - each fit at 800×800 and 1200×600 (BENCH_TRANSFORM_LARGE=1 adds 6000×6000, =only runs it alone): the output's size against
//   sharp's equivalent (±1 px), and SSIM of our JPEG against sharp's same operation (its raw pixels);
// - fit=cover 1080×1080 gravity=auto request time against sharp's `attention` crop written by MozJPEG;
// - blur=20 and sharpen=3 at width 1080: the time they add, against sharp's blur(10) and sharpen(sigma 1),
//   and SSIM of our blur against sharp's (float Gaussian);
// - trim=border's first pass: the time it adds to a fit=cover 1080×1080;
// - workerd's peak resident growth (lib/rss.ts), cold (a fresh service) and warm, for the largest photo;
// - crops of a 48 MP and a 24 MP photo (part `crops`, not in the default parts): request time (median of
//   warm requests) and peak growth, with the output's SHA-256, to put a run of another engine beside.
// BENCH_TRANSFORM_PHOTOS=N measures N of them, spread over the list; BENCH_TRANSFORM_PARTS=times (or
// fits, memory, comma-separated) runs only those parts; BENCH_TRANSFORM_FITS=contain,cover only those fits;
// BENCH_TRANSFORM_NAMES=a.jpg,b.jpg only those photos.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import sharp, { type FitEnum, type Sharp } from 'sharp';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { adminToken, codecs, compress, type CompressOptions, type CompressResult } from './lib/compress-client.ts';
import { readHeader } from '../../src/compress/header.ts';
import { plan } from '../../src/compress/memory-plan.ts';
import { transformOf } from '../../src/compress/transform/options.ts';
import { mbOf, withRssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';
import { decodeRgb, ssimOf, type Rgb } from './lib/ssim.ts';
import { CAMERA_DIR } from './jpeg-camera.ts';
import { FIT_MODES, type FitMode } from '../../src/compress/transform/options.ts';
import { BLUR_SIGMA_PER_STEP, SHARPEN_AMOUNT_PER_STEP, SHARPEN_SIGMA } from '../../src/compress/transform/options.ts';

/** The JPEG quality of both sides; BENCH_TRANSFORM_QUALITY=100 leaves the geometry alone in the SSIM. */
const QUALITY = Number(process.env.BENCH_TRANSFORM_QUALITY ?? 80);
/** BENCH_TRANSFORM_LARGE=1 adds the 6000×6000 box; =only measures it alone. */
const LARGE = process.env.BENCH_TRANSFORM_LARGE;
const BOXES: [number, number][] = [
  ...(LARGE === 'only' ? [] : [[800, 800] as [number, number], [1200, 600] as [number, number]]),
  ...(LARGE === '1' || LARGE === 'only' ? [[6000, 6000] as [number, number]] : []),
];
const THUMB = 1080;
const BLUR = 20;
const SHARPEN = 3;
/** Issue 48's bar: SSIM against sharp's same operation, every photo. */
const SSIM_BAR = 0.93;

/** Each fit's equivalent in sharp (docs/using-the-api.md, "Transformations"). */
const SHARP: Record<FitMode, { fit: keyof FitEnum; withoutEnlargement?: boolean }> = {
  'scale-down': { fit: 'inside', withoutEnlargement: true },
  contain: { fit: 'inside' },
  cover: { fit: 'cover' },
  crop: { fit: 'cover', withoutEnlargement: true },
  pad: { fit: 'contain' },
  squeeze: { fit: 'fill' },
};

/**
 * BENCH_TRANSFORM_ENGINE=1: each fit request starts from fresh engine instances (/internal/codecs/reset)
 * and its engines' peak memory is logged per photo beside the plan's estimate, with its status and SSIM.
 */
const ENGINE = process.env.BENCH_TRANSFORM_ENGINE === '1';
/** BENCH_TRANSFORM_FITS=contain,cover measures only those fits. */
const FITS: readonly FitMode[] = process.env.BENCH_TRANSFORM_FITS
  ? FIT_MODES.filter((fit) => process.env.BENCH_TRANSFORM_FITS!.split(',').includes(fit))
  : FIT_MODES;
const MiB = 1024 * 1024;

const log = (line: string) => console.error(line);
const PARTS = (process.env.BENCH_TRANSFORM_PARTS ?? 'fits,times,memory').split(',');
const part = (name: 'fits' | 'times' | 'memory' | 'crops'): boolean => PARTS.includes(name);
const median = (values: number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export interface FitRow {
  fit: FitMode;
  box: string;
  photos: number;
  failed: string[];
  /** Photos whose output size is within 1 px of sharp's on both sides. */
  sizeMatches: number;
  ssimMedian: number;
  ssimMin: number;
  belowBar: number;
  /** sharp's own MozJPEG q80 against its raw pixels: what the encoding alone costs in SSIM (median, min). */
  sharpSsimMedian: number;
  sharpSsimMin: number;
  /** Our bytes ÷ sharp's (MozJPEG q80) of the same operation, median. */
  bytesRatio: number;
}

export interface TimeRow {
  what: string;
  oursMs: number;
  sharpMs: number;
  /** Median of the per-photo ratios. */
  ratio: number;
  note?: string;
}

export interface MemoryRow {
  what: string;
  cold: { status: number; ms: number; growthBytes?: number; error?: string };
  warm: { status: number; ms: number; growthBytes?: number; error?: string };
}

export interface CropRow {
  what: string;
  cold: MemoryRow['cold'];
  /** The warm requests' median time and their largest peak growth. */
  warm: { ms: number; growthBytes?: number };
  /** The output's SHA-256 (first 16 hex digits): the same in two runs, the same bytes. */
  sha256: string;
}

export interface TransformBench {
  header: string;
  fits: FitRow[];
  times: TimeRow[];
  memory: MemoryRow[];
  crops: CropRow[];
}

interface Photo {
  name: string;
  bytes: Uint8Array;
}

/** The photos, or BENCH_TRANSFORM_PHOTOS of them spread evenly over the sorted list (cameras vary along it). */
function photos(): Photo[] {
  const names = readdirSync(CAMERA_DIR)
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort()
    .filter((f) => !process.env.BENCH_TRANSFORM_NAMES || process.env.BENCH_TRANSFORM_NAMES.split(',').includes(f));
  const limit = Math.min(names.length, Number(process.env.BENCH_TRANSFORM_PHOTOS ?? names.length));
  return Array.from({ length: limit }, (_, i) => names[Math.floor((i * names.length) / limit)]!).map((name) => ({
    name,
    bytes: new Uint8Array(readFileSync(join(CAMERA_DIR, name))),
  }));
}

const ours = (service: Service, photo: Photo, options: Record<string, string | number>): Promise<CompressResult> =>
  compress(service.base, service.demoKeys.image_pro!, photo.bytes, photo.name, {
    format: 'jpeg',
    quality: QUALITY,
    ...options,
  } as CompressOptions);

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const t0 = performance.now();
  const result = await run();
  return { result, ms: performance.now() - t0 };
}

/** sharp's fit of the upright photo into the box: its raw pixels (the reference) and its MozJPEG bytes. */
async function sharpFit(photo: Photo, fit: FitMode, w: number, h: number): Promise<{ ref: Rgb; jpeg: Uint8Array }> {
  const op = () =>
    sharp(photo.bytes, { limitInputPixels: false })
      .rotate()
      .resize(w, h, { ...SHARP[fit], background: '#ffffff' })
      .flatten({ background: '#ffffff' });
  const { data, info } = await op().removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const jpeg = await op().jpeg({ quality: QUALITY, mozjpeg: true }).toBuffer();
  return {
    ref: { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) },
    jpeg: new Uint8Array(jpeg),
  };
}

async function benchFits(service: Service, all: Photo[]): Promise<FitRow[]> {
  const rows: FitRow[] = [];
  for (const [w, h] of BOXES) {
    for (const fit of FITS) {
      const ssims: number[] = [];
      const sharpSsims: number[] = [];
      const ratios: number[] = [];
      const failed: string[] = [];
      let sizeMatches = 0;
      for (const photo of all) {
        if (ENGINE) await codecs(service.base, adminToken(), true);
        const r = await ours(service, photo, { fit, width: w, height: h });
        const engine = ENGINE ? await engineLine(service, photo, fit, w, h) : '';
        if (r.status !== 200 || !r.output) {
          failed.push(`${photo.name}: ${r.status} ${r.error ?? ''}`);
          if (ENGINE) log(`transform: fit=${fit} ${w}×${h} ${photo.name}: ${r.status}${engine}`);
          continue;
        }
        const theirs = await sharpFit(photo, fit, w, h);
        const decoded = await decodeRgb(r.output);
        if (Math.abs(decoded.width - theirs.ref.width) <= 1 && Math.abs(decoded.height - theirs.ref.height) <= 1)
          sizeMatches++;
        ssims.push(await ssimOf(theirs.ref, r.output));
        sharpSsims.push(await ssimOf(theirs.ref, theirs.jpeg));
        ratios.push(r.output.length / theirs.jpeg.length);
        if (ENGINE)
          log(
            `transform: fit=${fit} ${w}×${h} ${photo.name}: 200 ${decoded.width}×${decoded.height}, SSIM ${ssims.at(-1)!.toFixed(4)} (sharp's own ${sharpSsims.at(-1)!.toFixed(4)}), ${(r.output.length / MiB).toFixed(2)} MB${engine}`,
          );
      }
      const row: FitRow = {
        fit,
        box: `${w}×${h}`,
        photos: all.length,
        failed,
        sizeMatches,
        ssimMedian: median(ssims),
        ssimMin: Math.min(...ssims),
        belowBar: ssims.filter((s) => s < SSIM_BAR).length,
        sharpSsimMedian: median(sharpSsims),
        sharpSsimMin: Math.min(...sharpSsims),
        bytesRatio: median(ratios),
      };
      log(
        `transform: fit=${fit} ${row.box}: sizes ${sizeMatches}/${all.length}, SSIM median ${row.ssimMedian.toFixed(4)} min ${row.ssimMin.toFixed(4)} (sharp's own JPEG ${row.sharpSsimMedian.toFixed(4)}, min ${row.sharpSsimMin.toFixed(4)}), bytes ÷ sharp ${row.bytesRatio.toFixed(3)}${failed.length ? `, failed ${failed.join('; ')}` : ''}`,
      );
      rows.push(row);
    }
  }
  return rows;
}

/** The engines' peak memory of the last request against the plan's estimate (at the default budget). */
async function engineLine(service: Service, photo: Photo, fit: FitMode, w: number, h: number): Promise<string> {
  const report = await codecs(service.base, adminToken());
  const planned = plan(
    'jpeg',
    readHeader('jpeg', photo.bytes),
    photo.bytes.length,
    {
      format: 'jpeg',
      quality: QUALITY,
      width: w,
      height: h,
      transform: transformOf({ fit }),
    },
    100 * MiB,
  );
  const how = planned.turnBeforeResize ? ', turned before the resize' : '';
  return `; engines' peak ${(report.peak_bytes / MiB).toFixed(1)} MB, plan ${(planned.estimate / MiB).toFixed(1)} MB${how}`;
}

/** Ours and sharp's, one photo after the other, interleaved; medians and the median per-photo ratio. */
async function sideBySide(
  what: string,
  all: Photo[],
  oursOf: (photo: Photo) => Promise<number | null>,
  sharpOf: (photo: Photo) => Promise<number>,
  note?: string,
): Promise<TimeRow> {
  const o: number[] = [];
  const s: number[] = [];
  const ratios: number[] = [];
  for (const photo of all) {
    const a = await oursOf(photo);
    const b = await sharpOf(photo);
    if (a === null) continue;
    o.push(a);
    s.push(b);
    ratios.push(a / b);
  }
  const row = { what, oursMs: median(o), sharpMs: median(s), ratio: median(ratios), note };
  log(
    `transform: ${what}: ours ${row.oursMs.toFixed(0)} ms, sharp ${row.sharpMs.toFixed(0)} ms, ratio ${row.ratio.toFixed(2)}`,
  );
  return row;
}

const wall = async (run: () => Promise<CompressResult>): Promise<number | null> => {
  const r = await run();
  if (r.status !== 200) log(`transform: ${r.status} ${r.error}`);
  return r.status === 200 ? r.wallMs : null;
};

const sharpMs = async (make: () => Sharp): Promise<number> => (await timed(() => make().toBuffer())).ms;

async function benchTimes(service: Service, all: Photo[]): Promise<{ rows: TimeRow[]; blurSsim: number }> {
  const rows: TimeRow[] = [];
  const base = (p: Photo) => sharp(p.bytes, { limitInputPixels: false }).rotate();
  const mozjpeg = (s: Sharp) => s.jpeg({ quality: QUALITY, mozjpeg: true });
  rows.push(
    await sideBySide(
      `fit=cover ${THUMB}×${THUMB} gravity=auto (sharp: position attention)`,
      all,
      (p) => wall(() => ours(service, p, { fit: 'cover', width: THUMB, height: THUMB, gravity: 'auto' })),
      (p) => sharpMs(() => mozjpeg(base(p).resize(THUMB, THUMB, { fit: 'cover', position: 'attention' }))),
    ),
  );
  rows.push(
    await sideBySide(
      `fit=cover ${THUMB}×${THUMB} gravity=center (sharp: position centre)`,
      all,
      (p) => wall(() => ours(service, p, { fit: 'cover', width: THUMB, height: THUMB })),
      (p) => sharpMs(() => mozjpeg(base(p).resize(THUMB, THUMB, { fit: 'cover' }))),
    ),
  );
  rows.push(
    await sideBySide(
      `fit=cover ${THUMB}×${THUMB} trim=border (sharp: trim() first)`,
      all,
      (p) => wall(() => ours(service, p, { fit: 'cover', width: THUMB, height: THUMB, trim: 'border' })),
      (p) => sharpMs(() => mozjpeg(base(p).trim().resize(THUMB, THUMB, { fit: 'cover' }))),
    ),
  );
  rows.push(
    await sideBySide(
      `width=${THUMB}, plain`,
      all,
      (p) => wall(() => ours(service, p, { width: THUMB })),
      (p) => sharpMs(() => mozjpeg(base(p).resize(THUMB))),
    ),
  );
  // blur and sharpen make a request a transformation: its baseline is the transform path with nothing to do.
  rows.push(
    await sideBySide(
      `width=${THUMB} fit=contain (the transform path, no filter)`,
      all,
      (p) => wall(() => ours(service, p, { width: THUMB, fit: 'contain' })),
      (p) => sharpMs(() => mozjpeg(base(p).resize(THUMB))),
    ),
  );
  rows.push(
    await sideBySide(
      `width=${THUMB} blur=${BLUR} (sharp: blur(${BLUR * BLUR_SIGMA_PER_STEP}))`,
      all,
      (p) => wall(() => ours(service, p, { width: THUMB, blur: BLUR })),
      (p) =>
        sharpMs(() =>
          mozjpeg(
            base(p)
              .resize(THUMB)
              .blur(BLUR * BLUR_SIGMA_PER_STEP),
          ),
        ),
    ),
  );
  const amount = SHARPEN * SHARPEN_AMOUNT_PER_STEP;
  rows.push(
    await sideBySide(
      `width=${THUMB} sharpen=${SHARPEN} (sharp: sharpen sigma ${SHARPEN_SIGMA}, m1 = m2 = ${amount})`,
      all,
      (p) => wall(() => ours(service, p, { width: THUMB, sharpen: SHARPEN })),
      (p) => sharpMs(() => mozjpeg(base(p).resize(THUMB).sharpen({ sigma: SHARPEN_SIGMA, m1: amount, m2: amount }))),
    ),
  );
  // Our blur against sharp's float Gaussian of the same sigma, on the same resize (sharp's, as reference).
  const ssims: number[] = [];
  for (const p of all) {
    const r = await ours(service, p, { width: THUMB, blur: BLUR });
    if (!r.output) continue;
    const { data, info } = await base(p)
      .resize(THUMB)
      .blur({ sigma: BLUR * BLUR_SIGMA_PER_STEP, precision: 'float', minAmplitude: 0.01 })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    ssims.push(await ssimOf({ width: info.width, height: info.height, data: new Uint8Array(data) }, r.output));
  }
  const blurSsim = median(ssims);
  log(`transform: blur=${BLUR} SSIM against sharp's Gaussian, median ${blurSsim.toFixed(4)}`);
  return { rows, blurSsim };
}

/** The largest photo resized (q90, upright) by sharp: the issue's 24 MP and 48 MP photos. */
const resizedPhoto = async (largest: Photo, width: number, height: number): Promise<Photo> => ({
  name: `${largest.name} at ${width}×${height}`,
  bytes: new Uint8Array(
    await sharp(largest.bytes, { limitInputPixels: false })
      .rotate()
      .resize(width, height, { fit: 'fill' })
      .jpeg({ quality: 90 })
      .toBuffer(),
  ),
});

/** Warm requests per crop case, for a median time. */
const CROP_WARM_RUNS = 5;

async function benchCrops(start: () => Promise<Service>, largest: Photo): Promise<CropRow[]> {
  const photo24 = await resizedPhoto(largest, 6000, 4000);
  const photo48 = await resizedPhoto(largest, 8000, 6000);
  const cases: [string, Record<string, string | number>, Photo][] = [
    [
      `48 MP (8000×6000) fit=cover ${THUMB}×${THUMB} gravity=face`,
      { fit: 'cover', width: THUMB, height: THUMB, gravity: 'face' },
      photo48,
    ],
    // trim keeps the centre 1000×1000 at full scale: a crop of the source with no resize.
    [
      '24 MP (6000×4000) centre 1000×1000, full scale (trim=1500;2500;1500;2500)',
      { trim: '1500;2500;1500;2500' },
      photo24,
    ],
    [
      '24 MP (6000×4000) fit=cover 1000×1000 gravity=top',
      { fit: 'cover', width: 1000, height: 1000, gravity: 'top' },
      photo24,
    ],
  ];
  const rows: CropRow[] = [];
  for (const [what, options, photo] of cases) {
    const service = await start();
    try {
      const once = async () => {
        const { result, rss } = await withRssPeak(service.pid, () => ours(service, photo, options), true);
        return { result, growthBytes: rss.maxGrowthBytes };
      };
      const cold = await once();
      const warm = [];
      for (let i = 0; i < CROP_WARM_RUNS; i++) warm.push(await once());
      const sha256 = cold.result.output
        ? createHash('sha256').update(cold.result.output).digest('hex').slice(0, 16)
        : '-';
      const row: CropRow = {
        what,
        cold: {
          status: cold.result.status,
          ms: cold.result.wallMs,
          growthBytes: cold.growthBytes,
          error: cold.result.error,
        },
        warm: {
          ms: median(warm.map((w) => w.result.wallMs)),
          growthBytes: Math.max(...warm.map((w) => w.growthBytes ?? 0)),
        },
        sha256,
      };
      log(
        `transform: crop ${what}: cold ${row.cold.status} ${row.cold.ms.toFixed(0)} ms +${mbOf(row.cold.growthBytes)} MB, warm ${row.warm.ms.toFixed(0)} ms +${mbOf(row.warm.growthBytes)} MB, sha256 ${sha256}`,
      );
      rows.push(row);
    } finally {
      await service.stop();
    }
  }
  return rows;
}

async function benchMemory(start: () => Promise<Service>, largest: Photo): Promise<MemoryRow[]> {
  // The issue's quarter turn is of a 24 MP photo, its face crop of a 48 MP one.
  const photo24 = await resizedPhoto(largest, 6000, 4000);
  const photo48 = await resizedPhoto(largest, 8000, 6000);
  const cases: [string, Record<string, string | number>, Photo][] = [
    [
      `fit=cover ${THUMB}×${THUMB} gravity=auto`,
      { fit: 'cover', width: THUMB, height: THUMB, gravity: 'auto' },
      largest,
    ],
    [`fit=cover ${THUMB}×${THUMB} trim=border`, { fit: 'cover', width: THUMB, height: THUMB, trim: 'border' }, largest],
    ['width=2048 blur=20 sharpen=3', { width: 2048, blur: BLUR, sharpen: SHARPEN }, largest],
    ['rotate=90, full size', { rotate: 90 }, largest],
    ['24 MP (6000×4000) rotate=90, full size', { rotate: 90 }, photo24],
    [
      `48 MP (8000×6000) fit=cover ${THUMB}×${THUMB} gravity=face`,
      { fit: 'cover', width: THUMB, height: THUMB, gravity: 'face' },
      photo48,
    ],
  ];
  // BENCH_TRANSFORM_MEMORY=text measures only the cases whose names contain it.
  const only = process.env.BENCH_TRANSFORM_MEMORY;
  const rows: MemoryRow[] = [];
  for (const [what, options, photo] of cases) {
    if (only && !what.includes(only)) continue;
    const service = await start();
    try {
      const once = async () => {
        const { result, rss } = await withRssPeak(service.pid, () => ours(service, photo, options), true);
        return { status: result.status, ms: result.wallMs, growthBytes: rss.maxGrowthBytes, error: result.error };
      };
      const cold = await once();
      const warm = await once();
      log(
        `transform: memory ${what}: cold ${cold.status} +${mbOf(cold.growthBytes)} MB, warm ${warm.status} +${mbOf(warm.growthBytes)} MB`,
      );
      rows.push({ what, cold, warm });
    } finally {
      await service.stop();
    }
  }
  return rows;
}

export async function benchTransform(start: () => Promise<Service>): Promise<TransformBench> {
  const t0 = performance.now();
  const all = photos();
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const service = await start();
  let fits: FitRow[];
  let times: TimeRow[];
  let blurSsim: number;
  try {
    // Warm the engine: the first request loads its code.
    await ours(service, all[0]!, { width: 64 });
    fits = part('fits') ? await benchFits(service, all) : [];
    ({ rows: times, blurSsim } = part('times') ? await benchTimes(service, all) : { rows: [], blurSsim: Number.NaN });
  } finally {
    await service.stop();
  }
  // The most pixels, not the most bytes (a noisy 8 MP phone photo outweighs a 21 MP camera's).
  const sized = await Promise.all(
    all.map(async (p) => ({ p, meta: await sharp(p.bytes, { limitInputPixels: false }).metadata() })),
  );
  const { p: largest, meta } = sized.reduce((a, b) =>
    (b.meta.width ?? 0) * (b.meta.height ?? 0) > (a.meta.width ?? 0) * (a.meta.height ?? 0) ? b : a,
  );
  const memory = part('memory') ? await benchMemory(start, largest) : [];
  const crops = part('crops') ? await benchCrops(start, largest) : [];
  const header =
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), shared, load average ${load} at the start and ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end; Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. ` +
    `${all.length} camera photos (../shared/corpus/camera/), JPEG q${QUALITY} out, pro key, one request at a time under wrangler dev; ` +
    `sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}) on one thread, MozJPEG q${QUALITY}. Times: ours the request's wall time ` +
    `(upload on loopback included), sharp's the pipeline's; medians, ratio = median of per-photo ratios. ` +
    `SSIM vs sharp: our JPEG against sharp's same operation's raw pixels; sharp's own JPEG: its MozJPEG q${QUALITY} against the same, what the encode alone costs. Blur=${BLUR} SSIM against sharp's ` +
    `float Gaussian blur(${BLUR * BLUR_SIGMA_PER_STEP}): median ${blurSsim.toFixed(4)}. Memory: the largest photo (${largest.name}, ` +
    `${meta.width}×${meta.height}), workerd's peak resident growth, cold = first request of a fresh service, warm = again. ` +
    `Bench time ${((performance.now() - t0) / 1000).toFixed(0)} s.`;
  return { header, fits, times, memory, crops };
}

export function transformReport(r: TransformBench): string {
  const cell = (m: MemoryRow['cold']) =>
    m.status === 200
      ? `+${mbOf(m.growthBytes)} MB (${(m.ms / 1000).toFixed(2)} s)`
      : `**${m.status}** ${m.error ?? ''}`;
  return [
    r.header,
    '',
    `| fit | box | size = sharp's (±1 px) | SSIM vs sharp: median | min | below ${SSIM_BAR} | sharp's own JPEG: median | min | bytes ÷ sharp MozJPEG |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...r.fits.map(
      (f) =>
        `| ${f.fit} | ${f.box} | ${f.sizeMatches}/${f.photos}${f.failed.length ? ` (${f.failed.length} failed)` : ''} | ${f.ssimMedian.toFixed(4)} | ${f.ssimMin.toFixed(4)} | ${f.belowBar} | ${f.sharpSsimMedian.toFixed(4)} | ${f.sharpSsimMin.toFixed(4)} | ${f.bytesRatio.toFixed(3)} |`,
    ),
    '',
    '| request | ours ms | sharp ms | ours ÷ sharp |',
    '|---|---:|---:|---:|',
    ...r.times.map((t) => `| ${t.what} | ${t.oursMs.toFixed(0)} | ${t.sharpMs.toFixed(0)} | ${t.ratio.toFixed(2)} |`),
    '',
    '| largest photo → | cold: peak growth (time) | warm |',
    '|---|---:|---:|',
    ...r.memory.map((m) => `| ${m.what} | ${cell(m.cold)} | ${cell(m.warm)} |`),
    ...(r.crops.length
      ? [
          '',
          `| crop → | cold: peak growth (time) | warm: peak growth (median time of ${CROP_WARM_RUNS}) | output SHA-256 |`,
          '|---|---:|---:|---|',
          ...r.crops.map(
            (c) =>
              `| ${c.what} | ${cell(c.cold)} | +${mbOf(c.warm.growthBytes)} MB (${(c.warm.ms / 1000).toFixed(2)} s) | ${c.sha256} |`,
          ),
        ]
      : []),
  ].join('\n');
}
