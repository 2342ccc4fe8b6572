// `npm run bench -- avif`: the engine's AVIF encoder (wasm/codec/sr_avif.*, libavif over libaom's generic C,
// run in this process) against sharp's AVIF (native libheif + libaom, one thread) on the camera photos
// (../shared/corpus/camera/, read in place), and our JPEG beside it. Per photo, at WIDTH (2560; smaller
// photos kept), each side doing the whole job of a request on one thread, side by side in one process:
// - ours: the engine's own decode (DCT-scaled), resampler and EXIF orientation, its rows streaming in
//   bands of 16 into the module and encoded with `avifSettings(encoderQuality('avif', q), width, height)` (the service's
//   own mapping, src/compress/quality-scale.ts, and settings, wasm/avif-settings.ts) at each API quality of QUALITIES: timed from the first row decoded to the
//   output (wall time, and the process's CPU time); scored with SSIMULACRA2 against our own decoded and
//   resized rows (kept once, outside the timing); our JPEG of the same rows at the same q (the engine's
//   row encoder, as the service writes a resized JPEG) scored the same way;
// - sharp: avif({ quality, effort: 4, chromaSubsampling: '4:2:0' }) from the original JPEG (decode,
//   orientation, resize, encode: timed as one job) at the quality steps SHARP_STEPS it needs to bracket our
//   score, each scored against sharp's own decode + resize; its bytes at our score are interpolated (log
//   bytes linear in the score) between the two steps around it; time against its job at the step nearest
//   our score. Each encoder is scored against the picture it was given, so neither resampler counts.
// sharp's steps are kept in $TMPDIR (CACHE_DIR) as they are measured, and each photo's rows too:
// BENCH_AVIF_RESUME=1 continues a run that stopped (the photos done are read back; ours and sharp's of
// each were measured side by side), BENCH_AVIF_CACHE=1 reuses sharp's steps while settings are explored
// (its times then come from another run, and the rows say so). BENCH_AVIF_MEMORY=1 instead measures the
// module's memory peak for synthetic photos of MEMORY_MEGAPIXELS at full size, RGB and RGBA, with the
// service's grid; BENCH_AVIF_SCREENS (PNG paths) screenshots against sharp, with intra block copy on (a
// screen-like input's settings) and off, and the module's peak.
// Environment for exploring: BENCH_AVIF_IMAGES (how many photos, spread over the sorted corpus),
// BENCH_AVIF_QUALITIES (60,80,90), BENCH_AVIF_SPEED and BENCH_AVIF_OPTIONS (`tune=iq,deltaq-mode=3`:
// replace avifSettings' speed and options), BENCH_AVIF_LIBAVIF_QUALITY (libavif's quality itself, for
// settings compared at one point), BENCH_AVIF_SHARP (the API qualities compared with sharp too; 0: none, ours and our JPEG only),
// BENCH_AVIF_PART (k/n: a share of the photos, for parallel runs), BENCH_AVIF_PHOTOS (file names, comma-separated), BENCH_AVIF_CELL (a largest grid cell side),
// BENCH_AVIF_CODEC (another build's folder).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import {
  AVIF_SCREEN_FLAT_SHARE,
  type AvifSettings,
  avifGrid,
  avifPeakBytes,
  avifSettings,
  flatPixels,
} from '../../wasm/avif-settings.ts';
import { dctScale } from '../../src/compress/memory-plan.ts';
import { type Orientation, swapsAxes } from '../../src/compress/exif.ts';
import { fitWithin } from '../../src/compress/geometry.ts';
import { encoderQuality } from '../../src/compress/quality-scale.ts';
import { DEPTH, encodeAvif, encodeAvifBands, jpegRowBands, type Raw } from './lib/avif-node.ts';
import { engineJpegFromRgb, type NodeEngine, nodeEngine } from './lib/engine-node.ts';
import { dimensionsFor, syntheticPhoto } from './lib/images.ts'; // also sharp.cache(false), sharp.concurrency(1)
import { median } from './lib/load.ts';

export const WIDTH = Number(process.env.BENCH_AVIF_WIDTH ?? 2560);
export const QUALITIES = (process.env.BENCH_AVIF_QUALITIES ?? '60,80,90').split(',').map(Number);
/** The API qualities at which sharp is measured too (BENCH_AVIF_SHARP=0: none; the others: ours and our JPEG). */
const SHARP_QUALITIES =
  process.env.BENCH_AVIF_SHARP === '0'
    ? []
    : (process.env.BENCH_AVIF_SHARP ?? QUALITIES.join(',')).split(',').map(Number);
/** sharp's AVIF quality steps; its bytes at our score are interpolated between the two around it. */
export const SHARP_STEPS = [20, 30, 40, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95];
/** The full-size sizes whose memory is measured (megapixels). */
export const MEMORY_MEGAPIXELS = [2, 5, 12, 24];
const MiB = 1024 * 1024;
const root = resolve(new URL('../../', import.meta.url).pathname);
const shared = (path: string) =>
  [resolve(root, '../shared', path), resolve(root, '../../shared', path)].find(existsSync) ??
  resolve(root, '../shared', path);
const corpusDir = process.env.BENCH_AVIF_CORPUS ?? shared('corpus/camera');
const CACHE_DIR = join(tmpdir(), 'shrinkray-avif-sharp-cache');
const log = (line: string) => console.error(line);

/** The service's grid, or with BENCH_AVIF_CELL another largest cell side, to weigh memory against bytes. */
function gridFor(width: number, height: number, intrabc = false) {
  const cell = Number(process.env.BENCH_AVIF_CELL ?? 0);
  return cell ? { cols: Math.ceil(width / cell), rows: Math.ceil(height / cell) } : avifGrid(width, height, intrabc);
}

/**
 * The service's settings for API quality q and a width × height picture (`intrabc`: a screen-like
 * input's, intra block copy on), or the exploring overrides.
 */
function settingsFor(q: number, width = WIDTH, height = WIDTH, intrabc = false, screen = false): AvifSettings {
  const s = avifSettings(encoderQuality('avif', q), width, height, false, intrabc, screen);
  const options = process.env.BENCH_AVIF_OPTIONS?.split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]);
  return {
    quality: process.env.BENCH_AVIF_LIBAVIF_QUALITY ? Number(process.env.BENCH_AVIF_LIBAVIF_QUALITY) : s.quality,
    speed: process.env.BENCH_AVIF_SPEED ? Number(process.env.BENCH_AVIF_SPEED) : s.speed,
    options: options ?? s.options,
  };
}

function ssimulacra2Tool(): string {
  if (process.env.SSIMULACRA2) return process.env.SSIMULACRA2;
  const run = spawnSync('bash', [shared('tools/ssimulacra2.sh')], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ssimulacra2.sh failed: ${run.stderr}`);
  return run.stdout.trim();
}

/** Log-linear interpolation of bytes at `score` between two (score, bytes) points. */
function bytesAt(score: number, a: { score: number; bytes: number }, b: { score: number; bytes: number }): number {
  if (a.score === b.score) return a.bytes;
  const t = (score - a.score) / (b.score - a.score);
  return Math.exp(Math.log(a.bytes) + t * (Math.log(b.bytes) - Math.log(a.bytes)));
}

export interface SharpStep {
  quality: number;
  bytes: number;
  score: number;
  ms: number;
  /** The process's CPU time over sharp's job (sharp.concurrency(1): one thread), as ours is counted. */
  cpuMs?: number;
  /** Read back from an earlier run's cache (BENCH_AVIF_CACHE=1), not timed beside ours. */
  cached?: boolean;
}
export interface AvifQualityRow {
  q: number;
  libavifQuality: number;
  bytes: number;
  score: number;
  ms: number;
  /** The process's CPU time over the same work (what a Worker's CPU limit counts). */
  cpuMs: number;
  peakMiB: number;
  jpegBytes: number;
  jpegScore: number;
  /** sharp's bytes interpolated at our score, and whether our score was outside its steps. */
  sharpBytes: number;
  sharpMs: number;
  sharpCpuMs: number;
  sharpCached: boolean;
  outside: boolean;
  bytesRatio: number;
  timeRatio: number;
  /** Our CPU time over sharp's (its step nearest our score): on a loaded machine steadier than wall time. */
  cpuRatio: number;
}
export interface AvifPhotoRow {
  name: string;
  width: number;
  height: number;
  sharp: SharpStep[];
  qualities: AvifQualityRow[];
}
export interface AvifMemoryRow {
  megapixels: number;
  width: number;
  height: number;
  channels: 3 | 4;
  cols: number;
  rows: number;
  ms: number;
  filledMiB: number;
  peakMiB: number;
  estimateMiB: number;
}
export interface AvifResult {
  width: number;
  settings: Record<number, AvifSettings>;
  sharp: string;
  photos: AvifPhotoRow[];
  medians: {
    q: number;
    bytesRatio: number;
    timeRatio: number;
    cpuRatio: number;
    score: number;
    jpegScore: number;
    bytes: number;
  }[];
  memory: AvifMemoryRow[];
  screens: AvifScreenRow[];
}

const writePng = (raw: Raw, path: string) =>
  sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toFile(path);

/** SSIMULACRA2 of an encoded picture against the RGB picture it was made from (`raw`, written at `refPath`). */
function scorer(dir: string): (encoded: Uint8Array, raw: Raw, refPath: string) => Promise<number> {
  const tool = ssimulacra2Tool();
  return async (encoded, raw, refPath) => {
    const outPath = join(dir, 'out.png');
    const decoded = await sharp(encoded).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    if (decoded.info.width !== raw.width || decoded.info.height !== raw.height) throw new Error('decoded size differs');
    await writePng({ ...raw, data: decoded.data }, outPath);
    const run = spawnSync(tool, [refPath, outPath], { encoding: 'utf8' });
    const value = Number.parseFloat(run.stdout);
    if (run.status !== 0 || !Number.isFinite(value)) throw new Error(`ssimulacra2: ${run.stderr}`);
    return value;
  };
}

async function benchPhotos(): Promise<AvifPhotoRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'avif-bench-'));
  const score = scorer(dir);
  const sharpRefPath = join(dir, 'sharp-ref.png');
  const ourRefPath = join(dir, 'our-ref.png');
  let files = readdirSync(corpusDir)
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort();
  if (process.env.BENCH_AVIF_PHOTOS) files = process.env.BENCH_AVIF_PHOTOS.split(',');
  const want = Number(process.env.BENCH_AVIF_IMAGES ?? files.length);
  if (want < files.length)
    files = Array.from({ length: want }, (_, i) => files[Math.floor((i * files.length) / want)]!);
  // BENCH_AVIF_PART=k/n: every n-th of those from the k-th, to share a run between processes.
  const [part, parts] = (process.env.BENCH_AVIF_PART ?? '0/1').split('/').map(Number) as [number, number];
  files = files.filter((_, i) => i % parts === part);
  // sharp's steps are always kept (a run can be resumed); they are read back only with BENCH_AVIF_CACHE=1.
  const useCache = process.env.BENCH_AVIF_CACHE === '1';
  mkdirSync(CACHE_DIR, { recursive: true });
  const jpegEngine: NodeEngine = await nodeEngine();
  // Each photo's rows (ours and sharp's, measured side by side) are kept as they are measured, keyed by
  // the settings; BENCH_AVIF_RESUME=1 takes the photos already there and measures only the rest.
  const settingsKey = createHash('sha1')
    .update(JSON.stringify(QUALITIES.map((q) => [q, settingsFor(q)])))
    .digest('hex');
  const rowsPath = join(CACHE_DIR, `rows-${WIDTH}-${sharp.versions.aom}-${settingsKey.slice(0, 12)}.json`);
  const done = new Map<string, AvifPhotoRow>(
    process.env.BENCH_AVIF_RESUME === '1' && existsSync(rowsPath)
      ? (JSON.parse(readFileSync(rowsPath, 'utf8')) as AvifPhotoRow[]).map((p) => [p.name, p])
      : [],
  );
  const photos: AvifPhotoRow[] = [];
  for (const name of files) {
    const resumed = done.get(name);
    if (resumed) {
      log(`${name}: from ${rowsPath}`);
      photos.push(resumed);
      continue;
    }
    const input = readFileSync(join(corpusDir, name));
    const pipeline = () => sharp(input).rotate().resize({ width: WIDTH, withoutEnlargement: true });
    const ref = await pipeline().removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const sharpRef: Raw = {
      data: new Uint8Array(ref.data.buffer, ref.data.byteOffset, ref.data.byteLength),
      width: ref.info.width,
      height: ref.info.height,
      channels: 3,
    };
    await writePng(sharpRef, sharpRefPath);
    // Ours as the service does it: the engine's DCT-scaled decode, resampler and orientation, the rows
    // streaming into the encoder; its rows are kept (once) to score our output against.
    const meta = await sharp(input).metadata();
    const orientation = (meta.orientation ?? 1) as Orientation;
    const header = { width: meta.width!, height: meta.height! };
    const upright = swapsAxes(orientation) ? { width: header.height, height: header.width } : header;
    const output = fitWithin(upright, { width: WIDTH });
    const stored = swapsAxes(orientation) ? { width: output.height, height: output.width } : output;
    const scaleNum = output === upright ? 8 : dctScale(header, stored);
    const size = { ...output, channels: 3 as const };
    const ourBands = jpegRowBands(jpegEngine, input, { ...output, scaleNum, orientation });
    const ours = new Uint8Array(output.width * output.height * 3);
    let filled = 0;
    ourBands((band) => {
      ours.set(band, filled);
      filled += band.length;
    });
    const ourRef: Raw = { ...size, data: ours };
    await writePng(ourRef, ourRefPath);
    const cachePath = join(CACHE_DIR, `${name}-${WIDTH}-${sharp.versions.aom}.json`);
    const sharpSteps = new Map<number, SharpStep>(
      useCache && existsSync(cachePath)
        ? (JSON.parse(readFileSync(cachePath, 'utf8')) as SharpStep[]).map((s) => [s.quality, { ...s, cached: true }])
        : [],
    );
    const sharpAt = async (quality: number): Promise<SharpStep> => {
      let step = sharpSteps.get(quality);
      if (!step) {
        const t = performance.now();
        const cpu0 = process.cpuUsage();
        const out = await pipeline().avif({ quality, effort: 4, chromaSubsampling: '4:2:0' }).toBuffer();
        const ms = performance.now() - t;
        const cpu = process.cpuUsage(cpu0);
        const cpuMs = (cpu.user + cpu.system) / 1000;
        step = { quality, bytes: out.length, score: await score(out, sharpRef, sharpRefPath), ms, cpuMs };
        sharpSteps.set(quality, step);
        writeFileSync(cachePath, JSON.stringify([...sharpSteps.values()]));
      }
      return step;
    };
    const qualities: AvifQualityRow[] = [];
    for (const q of QUALITIES) {
      const settings = settingsFor(q, output.width, output.height);
      const encoded = await encodeAvifBands(size, ourBands, settings, gridFor(output.width, output.height));
      const ourScore = await score(encoded.output, ourRef, ourRefPath);
      const jpeg = engineJpegFromRgb(jpegEngine, ours, output.width, output.height, q);
      const jpegScore = await score(jpeg, ourRef, ourRefPath);
      const row: AvifQualityRow = {
        q,
        libavifQuality: settings.quality,
        bytes: encoded.output.length,
        score: ourScore,
        ms: encoded.ms,
        cpuMs: encoded.cpuMs,
        peakMiB: encoded.peakBytes / MiB,
        jpegBytes: jpeg.length,
        jpegScore,
        sharpBytes: Number.NaN,
        sharpMs: Number.NaN,
        sharpCpuMs: Number.NaN,
        sharpCached: false,
        outside: false,
        bytesRatio: Number.NaN,
        timeRatio: Number.NaN,
        cpuRatio: Number.NaN,
      };
      qualities.push(row);
      let line = `${name} ${output.width}×${output.height} q${q} (libavif ${settings.quality}, speed ${settings.speed}): ${row.bytes} B s2 ${ourScore.toFixed(2)} ${row.ms.toFixed(0)} ms (CPU ${row.cpuMs.toFixed(0)} ms); JPEG ${jpeg.length} B s2 ${jpegScore.toFixed(2)}`;
      if (SHARP_QUALITIES.includes(q)) {
        const { lo, hi } = await bracket(sharpAt, settings.quality, ourScore);
        const nearest = Math.abs(lo.score - ourScore) <= Math.abs(hi.score - ourScore) ? lo : hi;
        row.outside = (lo.score - ourScore) * (hi.score - ourScore) > 0;
        row.sharpBytes = bytesAt(ourScore, lo, hi);
        row.sharpMs = nearest.ms;
        row.sharpCpuMs = nearest.cpuMs ?? Number.NaN;
        row.sharpCached = nearest.cached === true;
        row.bytesRatio = row.bytes / row.sharpBytes;
        row.timeRatio = row.ms / nearest.ms;
        row.cpuRatio = row.cpuMs / row.sharpCpuMs;
        line +=
          `; sharp q${lo.quality}/q${hi.quality} ${row.sharpBytes.toFixed(0)} B at our score${row.outside ? ' (outside its steps)' : ''}, ${nearest.ms.toFixed(0)} ms (CPU ${row.sharpCpuMs.toFixed(0)} ms)${row.sharpCached ? ' (cached)' : ''}: ` +
          `${row.bytesRatio.toFixed(3)}× bytes, ${row.timeRatio.toFixed(2)}× time, ${row.cpuRatio.toFixed(2)}× CPU`;
      }
      log(line);
    }
    photos.push({ name, width: output.width, height: output.height, sharp: [...sharpSteps.values()], qualities });
    done.set(name, photos.at(-1)!);
    writeFileSync(rowsPath, JSON.stringify([...done.values()]));
  }
  rmSync(dir, { recursive: true, force: true });
  return photos;
}

/** sharp's two steps around `score`: from the step nearest libavif's quality, walking towards it. */
async function bracket(
  sharpAt: (quality: number) => Promise<SharpStep>,
  libavifQuality: number,
  score: number,
): Promise<{ lo: SharpStep; hi: SharpStep }> {
  let i = SHARP_STEPS.reduce(
    (best, s, k) => (Math.abs(s - libavifQuality) < Math.abs(SHARP_STEPS[best]! - libavifQuality) ? k : best),
    0,
  );
  let lo = await sharpAt(SHARP_STEPS[i]!);
  let hi = lo;
  if (lo.score > score) {
    while (i > 0 && hi.score > score) {
      lo = hi;
      hi = await sharpAt(SHARP_STEPS[--i]!);
    }
  } else {
    while (i < SHARP_STEPS.length - 1 && hi.score <= score) {
      lo = hi;
      hi = await sharpAt(SHARP_STEPS[++i]!);
    }
  }
  return { lo, hi };
}

export interface AvifScreenEncode {
  bytes: number;
  score: number;
  /** The module's memory after the encode (a fresh instance: its peak), and avifPeakBytes' estimate. */
  peakMiB: number;
  estimateMiB: number;
  cpuMs: number;
}

export interface AvifScreenRow {
  name: string;
  width: number;
  height: number;
  q: number;
  /** The service's settings for a lossless input whose plan fits the hash (intra block copy on; screen content when mostly flat), and a photo's (off). */
  on: AvifScreenEncode;
  off: AvifScreenEncode;
  /** sharp's steps, its bytes at our (intra block copy on) score, and whether that score was outside them. */
  sharp: SharpStep[];
  sharpBytes: number;
  outside: boolean;
}

/**
 * Screenshots against sharp and what intra block copy gives: each PNG of BENCH_AVIF_SCREENS
 * (comma-separated paths) at full size, opaque (RGB), encoded at each of QUALITIES with a screen-like
 * input's settings (intra block copy on) and a photo's (off), each scored against the PNG, with the
 * module's peak; sharp (effort 4, 4:2:0, from the PNG) at the steps around our score, scored the same way
 * (BENCH_AVIF_SHARP=0: not). Bytes at equal score are compared in the report (log-linear).
 */
async function benchScreens(paths: string[]): Promise<AvifScreenRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'avif-screens-'));
  const score = scorer(dir);
  const refPath = join(dir, 'ref.png');
  const rows: AvifScreenRow[] = [];
  for (const path of paths) {
    const decoded = await sharp(path, { limitInputPixels: false })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw: Raw = {
      data: new Uint8Array(decoded.data),
      width: decoded.info.width,
      height: decoded.info.height,
      channels: 3,
    };
    await writePng(raw, refPath);
    const name = path.split('/').at(-1)!;
    // The service's test for screen content (avif-engine.ts), on the same rows.
    let flat = 0;
    for (let y = 0; y < raw.height; y++)
      flat += flatPixels(raw.data.subarray(y * raw.width * 3, (y + 1) * raw.width * 3), raw.width, 3);
    const screen = flat >= AVIF_SCREEN_FLAT_SHARE * raw.width * raw.height;
    log(
      `${name}: ${((100 * flat) / (raw.width * raw.height)).toFixed(1)} % flat pixels${screen ? ': screen content' : ''}`,
    );
    const sharpSteps = new Map<number, SharpStep>();
    const sharpAt = async (quality: number): Promise<SharpStep> => {
      let step = sharpSteps.get(quality);
      if (!step) {
        const t = performance.now();
        const out = await sharp(path, { limitInputPixels: false })
          .removeAlpha()
          .avif({ quality, effort: 4, chromaSubsampling: '4:2:0' })
          .toBuffer();
        const ms = performance.now() - t;
        step = { quality, bytes: out.length, score: await score(out, raw, refPath), ms };
        sharpSteps.set(quality, step);
      }
      return step;
    };
    for (const q of QUALITIES) {
      const encodeWith = async (intrabc: boolean): Promise<AvifScreenEncode> => {
        const settings = settingsFor(q, raw.width, raw.height, intrabc, intrabc && screen);
        const r = await encodeAvif(raw, settings, gridFor(raw.width, raw.height, intrabc));
        return {
          bytes: r.output.length,
          score: await score(r.output, raw, refPath),
          peakMiB: r.peakBytes / MiB,
          estimateMiB: avifPeakBytes(raw.width, raw.height, 3, intrabc) / MiB,
          cpuMs: r.cpuMs,
        };
      };
      const on = await encodeWith(true);
      const off = await encodeWith(false);
      const row: AvifScreenRow = {
        name,
        width: raw.width,
        height: raw.height,
        q,
        on,
        off,
        sharp: [],
        sharpBytes: Number.NaN,
        outside: false,
      };
      let line = `${name} ${raw.width}×${raw.height} q${q}: intrabc on ${on.bytes} B s2 ${on.score.toFixed(2)} peak ${on.peakMiB.toFixed(1)} MiB (estimate ${on.estimateMiB.toFixed(1)}) CPU ${on.cpuMs.toFixed(0)} ms; off ${off.bytes} B s2 ${off.score.toFixed(2)} peak ${off.peakMiB.toFixed(1)} MiB CPU ${off.cpuMs.toFixed(0)} ms`;
      if (SHARP_QUALITIES.includes(q)) {
        const { lo, hi } = await bracket(sharpAt, settingsFor(q, raw.width, raw.height).quality, on.score);
        row.outside = (lo.score - on.score) * (hi.score - on.score) > 0;
        row.sharpBytes = bytesAt(on.score, lo, hi);
        line += `; sharp q${lo.quality}/q${hi.quality} ${row.sharpBytes.toFixed(0)} B at our score${row.outside ? ' (outside its steps)' : ''}: ${(on.bytes / row.sharpBytes).toFixed(3)}× bytes`;
      }
      row.sharp = [...sharpSteps.values()];
      rows.push(row);
      log(line);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return rows;
}

/** Bytes of `rows`' `on` encodes interpolated at each `off` score (log-linear), over the off bytes. */
export function intrabcRatios(rows: AvifScreenRow[]): { name: string; q: number; ratio: number }[] {
  return rows.flatMap((r) => {
    const same = rows
      .filter((o) => o.name === r.name)
      .map((o) => o.on)
      .sort((a, b) => a.score - b.score);
    const hi = same.find((o) => o.score >= r.off.score) ?? same.at(-1)!;
    const lo = [...same].reverse().find((o) => o.score <= r.off.score) ?? same[0]!;
    return [{ name: r.name, q: r.q, ratio: r.off.bytes / bytesAt(r.off.score, lo, hi) }];
  });
}

/** The module's memory peak at full size for synthetic photos, RGB and RGBA, with the service's grid. */
async function benchMemory(): Promise<AvifMemoryRow[]> {
  const rows: AvifMemoryRow[] = [];
  const settings = settingsFor(80);
  for (const megapixels of (process.env.BENCH_AVIF_MEMORY_MP ?? MEMORY_MEGAPIXELS.join(',')).split(',').map(Number)) {
    const { width, height } = dimensionsFor(megapixels);
    const photo = await syntheticPhoto(megapixels);
    for (const channels of [3, 4] as const) {
      const decoded = await sharp(photo.path)
        [channels === 4 ? 'ensureAlpha' : 'removeAlpha']()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const raw: Raw = { data: new Uint8Array(decoded.data), width, height, channels };
      const r = await encodeAvif(raw, settings, gridFor(width, height));
      const row: AvifMemoryRow = {
        megapixels,
        width,
        height,
        channels,
        cols: r.grid.cols,
        rows: r.grid.rows,
        ms: r.ms,
        filledMiB: r.filledBytes / MiB,
        peakMiB: r.peakBytes / MiB,
        estimateMiB: avifPeakBytes(width, height, channels, false, DEPTH) / MiB,
      };
      rows.push(row);
      log(
        `${megapixels} MP ${width}×${height} ${channels === 4 ? 'RGBA' : 'RGB'} grid ${row.cols}×${row.rows}: ${row.ms.toFixed(0)} ms, ` +
          `${row.filledMiB.toFixed(1)} MiB after the rows, peak ${row.peakMiB.toFixed(1)} MiB (estimate ${row.estimateMiB.toFixed(1)})`,
      );
    }
  }
  return rows;
}

export async function benchAvif(): Promise<AvifResult> {
  const memoryOnly = process.env.BENCH_AVIF_MEMORY === '1';
  const screenPaths = process.env.BENCH_AVIF_SCREENS?.split(',').filter(Boolean) ?? [];
  const screens = screenPaths.length > 0 ? await benchScreens(screenPaths) : [];
  const photos = memoryOnly || screens.length > 0 ? [] : await benchPhotos();
  const medians = QUALITIES.map((q) => {
    const rows = photos.flatMap((p) => p.qualities.filter((r) => r.q === q));
    return {
      q,
      bytesRatio: median(rows.map((r) => r.bytesRatio).filter(Number.isFinite)),
      timeRatio: median(rows.map((r) => r.timeRatio).filter(Number.isFinite)),
      cpuRatio: median(rows.map((r) => r.cpuRatio).filter(Number.isFinite)),
      score: median(rows.map((r) => r.score)),
      jpegScore: median(rows.map((r) => r.jpegScore)),
      bytes: median(rows.map((r) => r.bytes)),
    };
  });
  const memory = memoryOnly || process.env.BENCH_AVIF_MEMORY === 'also' ? await benchMemory() : [];
  return {
    width: WIDTH,
    settings: Object.fromEntries(QUALITIES.map((q) => [q, settingsFor(q)])),
    sharp: `sharp ${sharp.versions.sharp} (libaom ${sharp.versions.aom}), effort 4, 4:2:0`,
    photos,
    medians,
    memory,
    screens,
  };
}

export function avifReport(r: AvifResult): string {
  const lines: string[] = [];
  if (r.photos.length > 0) {
    lines.push(
      `${r.photos.length} camera photos at width ${r.width}; ours: ${QUALITIES.map((q) => `q${q} → ${JSON.stringify(r.settings[q])}`).join('; ')}; against ${r.sharp}`,
      '',
      '| photo | q | ours bytes | s2 | JPEG s2 | ÷ sharp bytes at our s2 | ÷ sharp time | ÷ sharp CPU |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const p of r.photos)
      for (const q of p.qualities)
        lines.push(
          `| ${p.name} ${p.width}×${p.height} | ${q.q} | ${q.bytes} | ${q.score.toFixed(1)} | ${q.jpegScore.toFixed(1)} | ${q.bytesRatio.toFixed(3)}${q.outside ? '*' : ''} | ${q.timeRatio.toFixed(2)} | ${q.cpuRatio.toFixed(2)} |`,
        );
    lines.push(
      '',
      '| q | median bytes | median s2 | median JPEG s2 | bytes ÷ sharp | time ÷ sharp | CPU ÷ sharp |',
      '|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const m of r.medians)
      lines.push(
        `| ${m.q} | ${m.bytes.toFixed(0)} | ${m.score.toFixed(1)} | ${m.jpegScore.toFixed(1)} | ${m.bytesRatio.toFixed(3)} | ${m.timeRatio.toFixed(2)} | ${m.cpuRatio.toFixed(2)} |`,
      );
  }
  if (r.screens.length > 0) {
    const ratios = intrabcRatios(r.screens);
    lines.push(
      '',
      '| screenshot | q | intra block copy on: bytes, s2, peak (estimate) MiB | off: bytes, s2, peak MiB | off ÷ on bytes at equal s2 | on ÷ sharp bytes at equal s2 |',
      '|---|---:|---|---|---:|---:|',
      ...r.screens.map(
        (s, i) =>
          `| ${s.name} ${s.width}×${s.height} | ${s.q} | ${s.on.bytes}, ${s.on.score.toFixed(2)}, ${s.on.peakMiB.toFixed(1)} (${s.on.estimateMiB.toFixed(1)}) | ${s.off.bytes}, ${s.off.score.toFixed(2)}, ${s.off.peakMiB.toFixed(1)} | ${ratios[i]!.ratio.toFixed(3)} | ${(s.on.bytes / s.sharpBytes).toFixed(3)}${s.outside ? '*' : ''} |`,
      ),
    );
  }
  if (r.memory.length > 0) {
    lines.push(
      '',
      '| MP | size | pixels | grid | time ms | after rows MiB | peak MiB | estimate MiB |',
      '|---:|---|---|---|---:|---:|---:|---:|',
    );
    for (const m of r.memory)
      lines.push(
        `| ${m.megapixels} | ${m.width}×${m.height} | ${m.channels === 4 ? 'RGBA' : 'RGB'} | ${m.cols}×${m.rows} | ${m.ms.toFixed(0)} | ${m.filledMiB.toFixed(1)} | ${m.peakMiB.toFixed(1)} | ${m.estimateMiB.toFixed(1)} |`,
      );
  }
  return lines.join('\n');
}

// Run directly (`node test/bench/avif.ts`) while exploring settings: no service needed.
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchAvif();
  console.log(`\n${avifReport(result)}\n`);
  mkdirSync(join(root, 'test/bench/results'), { recursive: true });
  writeFileSync(join(root, `test/bench/results/avif-${Date.now()}.json`), JSON.stringify(result, null, 2));
}
