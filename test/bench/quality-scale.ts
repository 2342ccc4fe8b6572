// `npm run bench -- quality-scale`: does `quality` mean the same in every lossy format? On the camera
// photos (../shared/corpus/camera/, read in place) at width 2048 (as `width=2048` asks: the longest side
// of a landscape photo, the short side of a portrait one; smaller photos kept), each photo goes through
// the engine exactly as the service takes a camera JPEG to each format: the DCT-scaled decode, the
// resampler and the EXIF orientation, then our JPEG encoder (the job's own encode, 4:2:0 below
// FULL_CHROMA_QUALITY, progressive), libwebp filled from the JPEG job (method WEBP_METHOD), or the AVIF
// module fed the same rows (avifSettings, the service's grid), each at the encoder quality the service
// maps the API's q to (src/compress/quality-scale.ts). The reference is the engine's own decoded and
// resized rows, the same for every format: each encoder is judged on the picture it was given, so the
// resampler's loss counts in none of them and differences are the encoders' alone.
// SSIMULACRA2 (../shared/tools/ssimulacra2.sh, at most two at a time) and bytes are kept per photo,
// format, encoder quality and settings in $TMPDIR (CACHE_DIR), so reruns and searches are cheap (and,
// for the jxl bench, which encodes every time, scores by the encoded bytes' digest).
// Environment: BENCH_QS_PHOTOS=n (n photos spread over the sorted corpus, while tuning),
// BENCH_QS_QUALITIES (60,80,90), BENCH_QS_SEARCH=1 (for WebP and AVIF, search the encoder quality whose
// median SSIMULACRA2 difference to our JPEG at each q is nearest 0, and print the points),
// BENCH_QS_AVIF_OPTIONS (`tune=iq,aq-mode=1`: replace AVIF's libaom options), BENCH_QS_AVIF_SPEED,
// BENCH_QS_AVIF_CELL (a largest grid cell side, to weigh the cells' bytes against their time),
// BENCH_QS_WIDTH (another width than 2048, for quicker trials; its measures are kept apart),
// BENCH_QS_FORMATS (webp,avif; jxl too: JPEG XL at libjxl's distance, JXL_EFFORT, decoded by Debian's
// djxl, apt-get install libjxl-tools, for scoring; its search is on the distance, to two decimals),
// BENCH_QS_JXL_EFFORT (another effort than JXL_EFFORT), BENCH_QS_JXL_OPTIONS (`9=1,10=0`: libjxl frame
// settings by their JxlEncoderFrameSettingId in encode.h, =value; needs a trial module that takes them,
// BENCH_JXL_CODEC: test/bench/lib/jxl-node.ts).
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { type AvifSettings, avifGrid, avifSettings } from '../../wasm/avif-settings.ts';
import { type Orientation, swapsAxes } from '../../src/compress/exif.ts';
import { fitWithin } from '../../src/compress/geometry.ts';
import { FULL_CHROMA_QUALITY } from '../../src/compress/limits.ts';
import { dctScale } from '../../src/compress/memory-plan.ts';
import { JXL_EFFORT } from '../../src/compress/jxl/settings.ts';
import { encoderQuality } from '../../src/compress/quality-scale.ts';
import { DEPTH as AVIF_BENCH_DEPTH, encodeAvif, jpegRowBands, type Raw } from './lib/avif-node.ts';
import { encodeJxl, JXL_CODEC, type JxlOptions } from './lib/jxl-node.ts';
import { ENGINE_MODES, jobOutput, type NodeEngine, nodeEngine } from './lib/engine-node.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { median } from './lib/load.ts';

const run = promisify(execFile);
export const WIDTH = Number(process.env.BENCH_QS_WIDTH ?? 2048);
export const QUALITIES = (process.env.BENCH_QS_QUALITIES ?? '60,80,90').split(',').map(Number);
export type LossyFormat = 'jpeg' | 'webp' | 'avif' | 'jxl';
const MAPPED: Exclude<LossyFormat, 'jpeg'>[] = (process.env.BENCH_QS_FORMATS ?? 'webp,avif').split(',') as never;
const root = resolve(new URL('../../', import.meta.url).pathname);
const shared = (path: string) =>
  [resolve(root, '../shared', path), resolve(root, '../../shared', path)].find(existsSync) ??
  resolve(root, '../shared', path);
const CORPUS = process.env.BENCH_QS_CORPUS ?? shared('corpus/camera');
const CACHE_DIR = join(tmpdir(), 'shrinkray-quality-scale');
/** SSIMULACRA2 processes at a time: the machine's two cores are shared. */
const SCORERS = 2;
const log = (line: string) => console.error(line);
/**
 * The service's libwebp method, read from wasm/webp-engine.ts's source: that module imports the engine's
 * .wasm as a Worker module, which Node cannot load.
 */
const WEBP_METHOD = Number(
  /export const WEBP_METHOD = (\d+);/.exec(
    readFileSync(new URL('../../wasm/webp-engine.ts', import.meta.url), 'utf8'),
  )?.[1],
);
if (!Number.isInteger(WEBP_METHOD)) throw new Error('WEBP_METHOD not found in wasm/webp-engine.ts');

/** JPEG XL's effort and extra frame settings: the service's, or the exploring overrides. */
const JXL_BENCH_EFFORT = Number(process.env.BENCH_QS_JXL_EFFORT ?? JXL_EFFORT);
const JXL_BENCH_OPTIONS: JxlOptions = (process.env.BENCH_QS_JXL_OPTIONS ?? '')
  .split(',')
  .filter(Boolean)
  .map((kv) => kv.split('=').map(Number) as [number, number]);

/** AVIF's settings at libavif quality `e` for a width × height picture: the service's, or the exploring overrides. */
function avifAt(e: number, width = WIDTH, height = WIDTH): AvifSettings {
  const s = avifSettings(e, width, height);
  const options = process.env.BENCH_QS_AVIF_OPTIONS?.split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]);
  const speed = process.env.BENCH_QS_AVIF_SPEED ? Number(process.env.BENCH_QS_AVIF_SPEED) : s.speed;
  return { quality: s.quality, speed, options: options ?? s.options };
}

/** The service's grid, or with BENCH_QS_AVIF_CELL another largest cell side. */
function avifGridFor(width: number, height: number) {
  const cell = Number(process.env.BENCH_QS_AVIF_CELL ?? 0);
  return cell ? { cols: Math.ceil(width / cell), rows: Math.ceil(height / cell) } : avifGrid(width, height);
}

/** What a cached measure depends on besides the photo: the codecs' builds and the encoder settings. */
function settingsKey(format: LossyFormat): string {
  const wasm = format === 'avif' ? 'sr_avif.wasm' : format === 'jxl' ? 'sr_jxl.wasm' : 'sr_jpeg.wasm';
  const codec = format === 'jxl' ? JXL_CODEC : new URL('../../wasm/codec/', import.meta.url);
  const hash = createHash('sha1').update(readFileSync(new URL(wasm, codec)));
  if (format === 'avif') hash.update(JSON.stringify({ ...avifAt(50), quality: 0 }));
  // Only a cell other than the service's changes the key, so measures kept before it stay valid.
  if (format === 'avif' && process.env.BENCH_QS_AVIF_CELL) hash.update(`cell ${process.env.BENCH_QS_AVIF_CELL}`);
  // Likewise only a depth other than 8 (measures kept before depths were a setting were all 8).
  if (format === 'avif' && AVIF_BENCH_DEPTH !== 8) hash.update(`depth ${AVIF_BENCH_DEPTH}`);
  if (format === 'webp') hash.update(String(WEBP_METHOD));
  if (format === 'jxl') hash.update(`effort ${JXL_BENCH_EFFORT}`);
  // Only extra settings change the key, so the measures kept before they were a setting stay valid.
  if (format === 'jxl' && JXL_BENCH_OPTIONS.length) hash.update(`options ${JSON.stringify(JXL_BENCH_OPTIONS)}`);
  if (format === 'jpeg') hash.update(String(FULL_CHROMA_QUALITY));
  return hash.digest('hex').slice(0, 12);
}

export interface Measure {
  bytes: number;
  score: number;
  ms: number;
}

export interface Photo {
  name: string;
  input: Uint8Array;
  orientation: Orientation;
  /** Upright output size, and the stored size the decoder resamples to. */
  output: { width: number; height: number };
  stored: { width: number; height: number };
  scaleNum: number;
  refPath: string;
}

function ssimulacra2Tool(): string {
  if (process.env.SSIMULACRA2) return process.env.SSIMULACRA2;
  const script = shared('tools/ssimulacra2.sh');
  const built = spawnSync('bash', [script], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`${script} failed: ${built.stderr}`);
  return built.stdout.trim().split('\n').at(-1)!;
}

/** At most `n` of the returned function's tasks run at once. */
function limiter(n: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    while (active >= n) await new Promise<void>((r) => waiting.push(r));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

const writePng = (raw: { data: Uint8Array; width: number; height: number }, path: string) =>
  sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toFile(path);

/** The cached measures, one JSON file (a small one: a few numbers per encode). */
class Cache {
  private readonly path = join(CACHE_DIR, `measures-${WIDTH}.json`);
  private readonly entries: Record<string, Measure>;
  constructor() {
    mkdirSync(CACHE_DIR, { recursive: true });
    this.entries = existsSync(this.path)
      ? (JSON.parse(readFileSync(this.path, 'utf8')) as Record<string, Measure>)
      : {};
  }
  get(key: string): Measure | undefined {
    return this.entries[key];
  }
  set(key: string, m: Measure): void {
    this.entries[key] = m;
    writeFileSync(this.path, JSON.stringify(this.entries));
  }
}

/** The engine's job over `input`, its pixels set as the service sets them for `photo`. */
function jpegJob(e: NodeEngine, photo: Photo): { job: number; free: () => void } {
  const { m, memory } = e;
  const ptr = m._malloc!(photo.input.length);
  new Uint8Array(memory.buffer).set(photo.input, ptr);
  const job = m._sr_job_create!(ptr, photo.input.length);
  const free = () => {
    m._sr_job_destroy!(job);
    m._free!(ptr);
  };
  if (m._sr_job_header!(job) !== 0) {
    free();
    throw new Error(`${photo.name}: header refused`);
  }
  m._sr_job_close_header!(job);
  const { width, height } = photo.stored;
  if (m._sr_job_set_pixels!(job, photo.scaleNum, width, height, photo.orientation) !== 0) {
    free();
    throw new Error(`${photo.name}: pixel settings refused`);
  }
  return { job, free };
}

/** Our JPEG as the service writes a resized one: the job's encode (progressive: a 2048-pixel photo's buffer fits). */
function encodeJpeg(e: NodeEngine, photo: Photo, quality: number): Uint8Array {
  const { job, free } = jpegJob(e, photo);
  try {
    if (e.m._sr_job_encode!(job, quality, quality < FULL_CHROMA_QUALITY ? 1 : 0, ENGINE_MODES.progressive) !== 0)
      throw new Error(`${photo.name}: JPEG encode failed`);
    return jobOutput(e, job);
  } finally {
    free();
  }
}

/** libwebp lossy at its own `quality`, its picture filled from the JPEG job as withJpegAsWebp does. */
function encodeWebp(e: NodeEngine, photo: Photo, quality: number): Uint8Array {
  const { m, memory } = e;
  const webp = m._sr_webp_create!(0, 0);
  try {
    const { job, free } = jpegJob(e, photo);
    try {
      if (m._sr_webp_fill_from_jpeg!(webp, job, 0) !== 0) throw new Error(`${photo.name}: WebP fill failed`);
    } finally {
      free();
    }
    if (m._sr_webp_encode!(webp, quality, 0, WEBP_METHOD, 0, 0) !== 0)
      throw new Error(`${photo.name}: WebP encode failed`);
    const pair = m._malloc!(8);
    const parts: Uint8Array[] = [];
    for (let i = 0; i < m._sr_webp_chunk_count!(webp); i++) {
      m._sr_webp_chunk!(webp, i, pair);
      const [ptr, len] = new Int32Array(memory.buffer, pair, 2) as unknown as [number, number];
      parts.push(new Uint8Array(memory.buffer).slice(ptr, ptr + len));
    }
    m._free!(pair);
    return Buffer.concat(parts);
  } finally {
    m._sr_webp_destroy!(webp);
  }
}

/**
 * `photo` in `format` at the encoder's own `quality`, from its JPEG through `e` as the service takes it. AVIF
 * and JPEG XL run in a fresh instance of their module, whose size at the end is `modulePeakBytes`.
 */
export async function encodePhoto(
  e: NodeEngine,
  photo: Photo,
  format: LossyFormat,
  quality: number,
): Promise<{ output: Uint8Array; modulePeakBytes?: number }> {
  if (format === 'jpeg') return { output: encodeJpeg(e, photo, quality) };
  if (format === 'webp') return { output: encodeWebp(e, photo, quality) };
  if (format === 'jxl') {
    const r = await encodeJxl(rowsOf(e, photo), quality, JXL_BENCH_EFFORT, undefined, JXL_BENCH_OPTIONS);
    return { output: r.output, modulePeakBytes: r.peakBytes };
  }
  const raw = rowsOf(e, photo);
  const r = await encodeAvif(raw, avifAt(quality, raw.width, raw.height), avifGridFor(raw.width, raw.height));
  return { output: r.output, modulePeakBytes: r.peakBytes };
}

/** The engine's upright rows of `photo` at its output size. */
function rowsOf(e: NodeEngine, photo: Photo): Raw {
  const { width, height } = photo.output;
  const data = new Uint8Array(width * height * 3);
  let filled = 0;
  jpegRowBands(e, photo.input, { width, height, scaleNum: photo.scaleNum, orientation: photo.orientation })((band) => {
    data.set(band, filled);
    filled += band.length;
  });
  return { data, width, height, channels: 3 };
}

export class QualityScaleBench {
  private readonly cache = new Cache();
  private readonly keys: Record<LossyFormat, string> = {
    jpeg: settingsKey('jpeg'),
    webp: settingsKey('webp'),
    avif: settingsKey('avif'),
    jxl: settingsKey('jxl'),
  };
  private readonly scoreSlot = limiter(SCORERS);
  private readonly encodeSlot = limiter(1);
  private readonly tool = ssimulacra2Tool();
  private outN = 0;

  private readonly engine: NodeEngine;
  readonly photos: Photo[];

  private constructor(engine: NodeEngine, photos: Photo[]) {
    this.engine = engine;
    this.photos = photos;
  }

  static async open(): Promise<QualityScaleBench> {
    let files = readdirSync(CORPUS)
      .filter((f) => /\.jpe?g$/i.test(f))
      .sort();
    const want = Number(process.env.BENCH_QS_PHOTOS ?? files.length);
    if (want < files.length)
      files = Array.from({ length: want }, (_, i) => files[Math.floor((i * files.length) / want)]!);
    const engine = await nodeEngine();
    const refs = join(CACHE_DIR, 'refs');
    mkdirSync(refs, { recursive: true });
    const photos: Photo[] = [];
    for (const name of files) {
      const input = new Uint8Array(readFileSync(join(CORPUS, name)));
      const meta = await sharp(input).metadata();
      const orientation = (meta.orientation ?? 1) as Orientation;
      const header = { width: meta.width!, height: meta.height! };
      const upright = swapsAxes(orientation) ? { width: header.height, height: header.width } : header;
      const output = fitWithin(upright, { width: WIDTH });
      const stored = swapsAxes(orientation) ? { width: output.height, height: output.width } : output;
      const scaleNum = output === upright ? 8 : dctScale(header, stored);
      const refPath = join(refs, `${name}-${WIDTH}-${createHash('sha1').update(input).digest('hex').slice(0, 8)}.png`);
      const photo: Photo = { name, input, orientation, output, stored, scaleNum, refPath };
      if (!existsSync(refPath)) await writePng(rowsOf(engine, photo), refPath);
      photos.push(photo);
    }
    return new QualityScaleBench(engine, photos);
  }

  /** Bytes and SSIMULACRA2 of `photo` in `format` at the encoder's own `quality` (cached). */
  async measure(photo: Photo, format: LossyFormat, quality: number): Promise<Measure> {
    // A photo whose size takes another speed than the width's square (should the settings have one) says so.
    const speed = format === 'avif' ? avifAt(quality, photo.output.width, photo.output.height).speed : 0;
    const key = `${photo.name}|${format}|${quality}|${this.keys[format]}${speed && speed !== avifAt(quality).speed ? `|speed ${speed}` : ''}`;
    const known = this.cache.get(key);
    if (known) return known;
    const { encoded, ms } = await this.encodeSlot(async () => {
      const t = performance.now();
      const { output } = await encodePhoto(this.engine, photo, format, quality);
      return { encoded: output, ms: performance.now() - t };
    });
    const score = await this.score(photo, format, encoded);
    const m = { bytes: encoded.length, score, ms };
    this.cache.set(key, m);
    log(`${photo.name} ${format} ${quality}: ${m.bytes} B s2 ${score.toFixed(2)} ${ms.toFixed(0)} ms`);
    return m;
  }

  /**
   * SSIMULACRA2 of `encoded` (`photo` in `format`), kept by the bytes' digest: the score is deterministic,
   * so the same bytes against the same reference need not be scored twice, whatever run wrote them. The
   * entry's `ms` is the encode's time in the run that first scored it.
   */
  async scoreBytes(photo: Photo, format: LossyFormat, encoded: Uint8Array, ms: number): Promise<number> {
    const digest = createHash('sha1').update(encoded).digest('hex');
    const key = `sha1 ${digest}|${photo.refPath.slice(photo.refPath.lastIndexOf('/') + 1)}`;
    const known = this.cache.get(key);
    if (known) return known.score;
    const score = await this.score(photo, format, encoded);
    this.cache.set(key, { bytes: encoded.length, score, ms });
    return score;
  }

  private score(photo: Photo, format: LossyFormat, encoded: Uint8Array): Promise<number> {
    return this.scoreSlot(async () => {
      const outPath = join(CACHE_DIR, `out-${process.pid}-${this.outN++}.png`);
      const decoded = await decodeForScore(encoded, format, outPath);
      if (decoded.info.width !== photo.output.width || decoded.info.height !== photo.output.height)
        throw new Error(`${photo.name} ${format}: decoded size differs`);
      await writePng({ data: decoded.data, width: decoded.info.width, height: decoded.info.height }, outPath);
      try {
        const value = Number.parseFloat((await run(this.tool, [photo.refPath, outPath])).stdout);
        if (!Number.isFinite(value)) throw new Error('ssimulacra2 printed no score');
        return value;
      } finally {
        await run('rm', ['-f', outPath]);
      }
    });
  }

  /** Every photo in `format` at encoder quality `quality`, two at a time. */
  all(format: LossyFormat, quality: number): Promise<Measure[]> {
    return Promise.all(this.photos.map((p) => this.measure(p, format, quality)));
  }

  /**
   * The median over the photos of (score in `format` at encoder quality `e`) − (our JPEG's score at `q`):
   * the number the mapping brings within ±2.5 of 0.
   */
  async medianDiff(format: LossyFormat, e: number, q: number): Promise<number> {
    const [ours, jpeg] = await Promise.all([this.all(format, e), this.all('jpeg', q)]);
    return median(ours.map((m, i) => m.score - jpeg[i]!.score));
  }

  /**
   * JPEG XL's distance whose median difference to our JPEG at `q` is nearest 0 (scores fall as it
   * grows): bisected to two decimals from a bracket around `start`.
   */
  async searchDistance(q: number, start: number): Promise<{ e: number; diff: number }> {
    const at = async (d: number) => {
      const diff = await this.medianDiff('jxl', d, q);
      log(`search jxl q${q}: distance ${d} → median difference ${diff.toFixed(2)}`);
      return diff;
    };
    let lo = start;
    let hi = start;
    while ((await at(lo)) < 0 && lo > 0.1) lo = Math.max(0.1, Math.round(lo * 70) / 100);
    while ((await at(hi)) > 0 && hi < 25) hi = Math.round(hi * 140) / 100;
    while (hi - lo > 0.02) {
      const mid = Math.round(((lo + hi) / 2) * 100) / 100;
      if (mid === lo || mid === hi) break;
      if ((await at(mid)) > 0) lo = mid;
      else hi = mid;
    }
    const [dl, dh] = [await at(lo), await at(hi)];
    return Math.abs(dl) < Math.abs(dh) ? { e: lo, diff: dl } : { e: hi, diff: dh };
  }

  /** The encoder quality whose median difference to our JPEG at `q` is nearest 0 (scores rise with it). */
  async search(format: LossyFormat, q: number, start: number): Promise<{ e: number; diff: number }> {
    if (format === 'jxl') return this.searchDistance(q, start);
    const tried = new Map<number, number>();
    const at = async (e: number) => {
      if (!tried.has(e)) tried.set(e, await this.medianDiff(format, e, q));
      log(`search ${format} q${q}: encoder ${e} → median difference ${tried.get(e)!.toFixed(2)}`);
      return tried.get(e)!;
    };
    const top = format === 'avif' ? 98 : 100;
    // Bracket from the start with widening steps, then bisect to adjacent qualities.
    let lo = start;
    let hi = start;
    let step = 4;
    if ((await at(start)) < 0) {
      while (hi < top && (await at(hi)) < 0) {
        lo = hi;
        hi = Math.min(top, hi + step);
        step *= 2;
      }
    } else {
      while (lo > 1 && (await at(lo)) >= 0) {
        hi = lo;
        lo = Math.max(1, lo - step);
        step *= 2;
      }
    }
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if ((await at(mid)) < 0) lo = mid;
      else hi = mid;
    }
    const [dl, dh] = [await at(lo), await at(hi)];
    return Math.abs(dl) < Math.abs(dh) ? { e: lo, diff: dl } : { e: hi, diff: dh };
  }
}

/** The encoded picture's RGB for scoring: sharp's decode, or Debian's djxl for JPEG XL (sharp reads none). */
async function decodeForScore(encoded: Uint8Array, format: LossyFormat, scratch: string) {
  if (format !== 'jxl') return sharp(encoded).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const jxlPath = `${scratch}.jxl`;
  writeFileSync(jxlPath, encoded);
  try {
    await run('djxl', [jxlPath, `${scratch}.d.png`, '--quiet']);
    return await sharp(`${scratch}.d.png`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  } finally {
    await run('rm', ['-f', jxlPath, `${scratch}.d.png`]);
  }
}

export interface QualityScaleRow {
  name: string;
  width: number;
  height: number;
  /** Per format and API quality: the encoder's quality, bytes, score. */
  cells: Record<LossyFormat, Record<number, Measure & { encoder: number }>>;
}

export interface QualityScaleResult {
  width: number;
  points: Record<LossyFormat, Record<number, number>>;
  avif: AvifSettings;
  rows: QualityScaleRow[];
  medians: { format: LossyFormat; q: number; encoder: number; scoreDiff: number; bytesRatio: number; ms: number }[];
  search?: { format: LossyFormat; q: number; e: number; diff: number }[];
}

const formats: LossyFormat[] = ['jpeg', ...MAPPED];

export async function benchQualityScale(): Promise<QualityScaleResult> {
  const bench = await QualityScaleBench.open();
  log(`${bench.photos.length} photos at width ${WIDTH}`);
  let search: QualityScaleResult['search'];
  if (process.env.BENCH_QS_SEARCH === '1') {
    search = [];
    for (const format of MAPPED)
      for (const q of QUALITIES) {
        const found = await bench.search(format, q, encoderQuality(format, q));
        search.push({ format, q, ...found });
        log(`found ${format} q${q} → ${found.e} (median difference ${found.diff.toFixed(2)})`);
      }
  }
  const points = Object.fromEntries(
    formats.map((f) => [f, Object.fromEntries(QUALITIES.map((q) => [q, encoderQuality(f, q)]))]),
  ) as QualityScaleResult['points'];
  const rows: QualityScaleRow[] = [];
  for (const photo of bench.photos) {
    const cells = {} as QualityScaleRow['cells'];
    for (const f of formats) {
      cells[f] = {};
      for (const q of QUALITIES) {
        const encoder = points[f][q]!;
        cells[f][q] = { ...(await bench.measure(photo, f, encoder)), encoder };
      }
    }
    rows.push({ name: photo.name, ...photo.output, cells });
  }
  const medians = MAPPED.flatMap((format) =>
    QUALITIES.map((q) => ({
      format,
      q,
      encoder: points[format][q]!,
      scoreDiff: median(rows.map((r) => r.cells[format][q]!.score - r.cells.jpeg[q]!.score)),
      bytesRatio: median(rows.map((r) => r.cells[format][q]!.bytes / r.cells.jpeg[q]!.bytes)),
      ms: median(rows.map((r) => r.cells[format][q]!.ms)),
    })),
  );
  return { width: WIDTH, points, avif: avifAt(80), rows, medians, search };
}

export function qualityScaleReport(r: QualityScaleResult): string {
  const lines = [
    `${r.rows.length} camera photos at width ${r.width} (the engine's decode and resize; scored against its rows). ` +
      `Encoder quality per API q: ${MAPPED.map((f) => `${f} ${QUALITIES.map((q) => `${q}→${r.points[f][q]}`).join(', ')}`).join('; ')}. ` +
      `AVIF: speed ${r.avif.speed}, ${r.avif.options.map(([k, v]) => `${k}=${v}`).join(' ')}.`,
    '',
    `| photo | size | JPEG q80 bytes | s2 | ${MAPPED.map((f) => `${f} q80 s2 − JPEG | ${f} ÷ JPEG bytes`).join(' | ')} |`,
    `|---|---|---:|---:|${MAPPED.map(() => '---:|---:').join('|')}|`,
  ];
  const q80 = QUALITIES.includes(80) ? 80 : QUALITIES[0]!;
  for (const row of r.rows) {
    const j = row.cells.jpeg[q80]!;
    lines.push(
      `| ${row.name} | ${row.width}×${row.height} | ${j.bytes} | ${j.score.toFixed(1)} | ${MAPPED.map((f) => {
        const c = row.cells[f][q80]!;
        return `${(c.score - j.score).toFixed(1)} | ${(c.bytes / j.bytes).toFixed(3)}`;
      }).join(' | ')} |`,
    );
  }
  lines.push(
    '',
    '| format | q | encoder quality | median s2 − JPEG | median bytes ÷ JPEG | median encode ms |',
    '|---|---:|---:|---:|---:|---:|',
  );
  for (const q of QUALITIES) {
    const jpegMs = median(r.rows.map((row) => row.cells.jpeg[q]!.ms));
    const jpegScore = median(r.rows.map((row) => row.cells.jpeg[q]!.score));
    lines.push(`| jpeg | ${q} | ${q} | (median s2 ${jpegScore.toFixed(1)}) | 1 | ${jpegMs.toFixed(0)} |`);
    for (const m of r.medians.filter((x) => x.q === q))
      lines.push(
        `| ${m.format} | ${q} | ${m.encoder} | ${m.scoreDiff.toFixed(2)} | ${m.bytesRatio.toFixed(3)} | ${m.ms.toFixed(0)} |`,
      );
  }
  if (r.search?.length)
    lines.push(
      '',
      `Search (encoder quality whose median difference is nearest 0): ${r.search.map((s) => `${s.format} q${s.q} → ${s.e} (${s.diff.toFixed(2)})`).join('; ')}`,
    );
  return lines.join('\n');
}

// Run directly (`npx node test/bench/quality-scale.ts`) while tuning: no service needed.
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchQualityScale();
  console.log(`\n${qualityScaleReport(result)}\n`);
  mkdirSync(join(root, 'test/bench/results'), { recursive: true });
  writeFileSync(join(root, 'test/bench/results/quality-scale.json'), JSON.stringify(result, null, 2));
}
