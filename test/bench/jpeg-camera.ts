// `npm run bench -- jpeg-camera` (also run by `npm run bench -- jpeg`): the engine's JPEG encoder on camera
// and phone photos (../shared/corpus/camera/, read in place) and the corpus wallpapers, against sharp's
// MozJPEG (`mozjpeg: true`, 4:2:0), by bytes at equal SSIMULACRA2, equal butteraugli (max-norm) and equal
// SSIM. Ours is encoded at quality 60, 80 and 90 exactly as the service encodes a full-size JPEG (the
// engine's WebAssembly run in this process: upright by EXIF, 4:2:0 below 90, progressive while it fits);
// MozJPEG at the quality steps MOZ_STEPS, its bytes at our score interpolated (in log bytes) between the
// two steps that bracket it. Every metric is taken on the same centre crop (CROP × CROP) of the upright
// decoded original and of the decoded output; the whole image is encoded. MozJPEG's side depends only on
// the input, so its scores are kept per image and step in a cache outside the repository (CACHE_DIR),
// and a tuning run costs only our three encodes per image. BENCH_JPEG_SETTINGS (JSON) sets the engine's
// tuning knobs for a run, to compare settings without rebuilding the WebAssembly.
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { FULL_CHROMA_QUALITY as SERVICE_FULL_CHROMA_QUALITY } from '../../src/compress/limits.ts';
import { loadCorpus } from './lib/corpus.ts';
import { engineJpegFromJpeg, nodeEngine, type NodeEngine } from './lib/engine-node.ts';
import { withIcc } from './lib/jpeg-icc.ts';
import { type JpegliResult, jpegliReport, jpegliTool, measureJpegli } from './lib/jpegli.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { median } from './lib/load.ts';
import { decodeRgb, ssim, type Rgb } from './lib/ssim.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

/** The qualities ours is measured at. */
export const QUALITIES = (process.env.BENCH_CAMERA_QUALITIES ?? '60,80,90').split(',').map(Number);
/** MozJPEG's quality steps; its bytes at our score are interpolated between the two that bracket it. */
export const MOZ_STEPS = [50, 60, 70, 75, 80, 85, 90, 95, 98];
/** The side of the centre crop every metric is taken on (smaller images: their shorter side). */
export const CROP = 1024;
/** Where MozJPEG's scores are kept between runs: outside the repository. */
export const CACHE_DIR = process.env.BENCH_CAMERA_CACHE ?? join(tmpdir(), 'shrinkray-jpeg-camera-cache');
/** The camera photos: never copied into the repository. */
export const CAMERA_DIR = process.env.BENCH_CAMERA_DIR ?? beside('corpus/camera');
/** From this quality the service writes 4:4:4 chroma; BENCH_CAMERA_FULL_CHROMA measures another threshold. */
const FULL_CHROMA_QUALITY = Number(process.env.BENCH_CAMERA_FULL_CHROMA ?? SERVICE_FULL_CHROMA_QUALITY);
/** The encoder's progressive mode holds every coefficient; past this the service encodes two-pass (src/compress/memory-plan.ts). */
const PROGRESSIVE_MAX_BUFFER_BYTES = 48 * 1024 * 1024;

/** `../shared/<path>` next to the checkout (a worktree sits one level deeper, under ../wt/). */
function beside(path: string): string {
  const found = [join(ROOT, '../shared', path), join(ROOT, '../../shared', path)].find(existsSync);
  if (!found) throw new Error(`no ../shared/${path} beside the repository`);
  return found;
}

const log = (line: string) => console.error(line);

export type Metric = 'ssimulacra2' | 'butteraugli' | 'ssim';
export const METRICS: Metric[] = ['ssimulacra2', 'butteraugli', 'ssim'];
/** Higher is better for SSIMULACRA2 and SSIM, lower for butteraugli. */
const better = (metric: Metric, a: number, b: number) => (metric === 'butteraugli' ? a <= b : a >= b);

export interface Score {
  bytes: number;
  ssim: number;
  ssimulacra2: number;
  butteraugli: number;
}

/** Our bytes ÷ MozJPEG's at our score; `bound` when our score lies outside MozJPEG's steps (the ratio is then at most, or at least, this). */
export interface Ratio {
  ratio: number;
  bound?: '≤' | '≥';
}

export interface CameraResult {
  name: string;
  set: 'camera' | 'wallpaper';
  width: number;
  height: number;
  orientation: number;
  mode: 'progressive' | 'two_pass';
  moz: (Score & { quality: number })[];
  ours: (Score & { quality: number; ratios: Record<Metric, Ratio> })[];
  /** Our q80 SSIMULACRA2 minus MozJPEG q80's. */
  calibration?: number;
  /** Per quality: our SSIMULACRA2 minus MozJPEG's at the same quality (where MozJPEG has that step). */
  calibrations: Record<number, number>;
  /** Full image, q80: the engine's decode + upright + encode vs sharp's decode + rotate + encode, one thread, ms. */
  oursMs?: number;
  sharpMs?: number;
  /** jpegli's encodes when BENCH_JPEGLI names a binary (lib/jpegli.ts). */
  jpegli?: JpegliResult[];
}

/** The external scorers: SSIMULACRA2 by the shared script (which builds it once), butteraugli from PATH. */
function tools(): { ssimulacra2: string; butteraugli: string } {
  const script = beside('tools/ssimulacra2.sh');
  const built = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const ssimulacra2 = built.stdout.trim().split('\n').at(-1) ?? '';
  if (built.status !== 0 || !existsSync(ssimulacra2)) throw new Error(`${script} failed (${built.status})`);
  const butteraugli = spawnSync('sh', ['-c', 'command -v butteraugli'], { encoding: 'utf8' }).stdout.trim();
  if (!butteraugli) throw new Error('butteraugli is not on PATH (Debian package `butteraugli`)');
  return { ssimulacra2, butteraugli };
}

function crop(image: Rgb): Rgb {
  const side = Math.min(CROP, image.width, image.height);
  const left = (image.width - side) >> 1,
    top = (image.height - side) >> 1;
  const data = new Uint8Array(side * side * 3);
  for (let y = 0; y < side; y++)
    data.set(
      image.data.subarray(((top + y) * image.width + left) * 3, ((top + y) * image.width + left + side) * 3),
      y * side * 3,
    );
  return { width: side, height: side, data };
}

const png = (image: Rgb) =>
  sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();

/** Scores outputs against one image's reference crop. */
async function scorer(t: ReturnType<typeof tools>, input: Uint8Array) {
  const reference = crop(await decodeRgb(input));
  const dir = mkdtempSync(join(tmpdir(), 'shrinkray-jpeg-camera-'));
  const refPath = join(dir, 'ref.png');
  writeFileSync(refPath, await png(reference));
  let n = 0;
  return {
    async score(output: Uint8Array): Promise<Score> {
      const decoded = crop(await decodeRgb(output));
      const outPath = join(dir, `out-${n++}.png`);
      writeFileSync(outPath, await png(decoded));
      try {
        const [s2, ba] = await Promise.all([
          run(t.ssimulacra2, [refPath, outPath]),
          run(t.butteraugli, [refPath, outPath]),
        ]);
        const ssimulacra2 = Number.parseFloat(s2.stdout),
          butteraugli = Number.parseFloat(ba.stdout);
        if (!Number.isFinite(ssimulacra2) || !Number.isFinite(butteraugli))
          throw new Error(`unreadable scores: ${s2.stdout} / ${ba.stdout}`);
        return { bytes: output.byteLength, ssim: ssim(reference, decoded), ssimulacra2, butteraugli };
      } finally {
        rmSync(outPath, { force: true });
      }
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const mozjpeg = (input: Uint8Array, quality: number) =>
  sharp(input, { limitInputPixels: false })
    .rotate()
    .flatten({ background: '#ffffff' })
    .jpeg({ quality, mozjpeg: true })
    .toBuffer();

type MozScore = CameraResult['moz'][number];

/**
 * MozJPEG at the steps, each encoded and scored only when a search first needs it, and kept in the
 * cache (one file per image: its steps by quality).
 */
function mozSteps(input: Uint8Array, score: (out: Uint8Array) => Promise<Score>) {
  const key = createHash('sha256')
    .update(input)
    .update(`${CROP} ${sharp.versions.sharp} ${sharp.versions.vips}`)
    .digest('hex')
    .slice(0, 32);
  const file = join(CACHE_DIR, `${key}.json`);
  const known = new Map<number, MozScore>();
  if (existsSync(file)) for (const s of JSON.parse(readFileSync(file, 'utf8')) as MozScore[]) known.set(s.quality, s);
  const at = async (index: number): Promise<MozScore> => {
    const quality = MOZ_STEPS[index]!;
    let s = known.get(quality);
    if (!s) {
      s = { quality, ...(await score(await mozjpeg(input, quality))) };
      known.set(quality, s);
      mkdirSync(CACHE_DIR, { recursive: true });
      writeFileSync(file, JSON.stringify([...known.values()].sort((x, y) => x.quality - y.quality)));
    }
    return s;
  };
  return { at, measured: () => MOZ_STEPS.map((q) => known.get(q)).filter((s): s is MozScore => s !== undefined) };
}

/**
 * Our bytes ÷ MozJPEG's bytes at our score: the lowest step at least as good as ours and the one below
 * it, interpolated in log bytes (bytes grow about exponentially with the score near these qualities).
 */
export async function ratioAt(metric: Metric, ours: Score, moz: (index: number) => Promise<Score>): Promise<Ratio> {
  const target = ours[metric];
  // The lowest step at least as good as ours, by bisection (scores rise with quality; a step out of
  // order, as butteraugli's sometimes are, can move the bracket by one step).
  let lo = 0,
    hi = MOZ_STEPS.length - 1;
  if (!better(metric, (await moz(hi))[metric], target))
    return { ratio: ours.bytes / (await moz(hi)).bytes, bound: '≤' };
  if (better(metric, (await moz(0))[metric], target)) return { ratio: ours.bytes / (await moz(0)).bytes, bound: '≥' };
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (better(metric, (await moz(mid))[metric], target)) hi = mid;
    else lo = mid;
  }
  const [a, b] = [await moz(lo), await moz(hi)];
  const t = b[metric] === a[metric] ? 1 : (target - a[metric]) / (b[metric] - a[metric]);
  const bytes = Math.exp(Math.log(a.bytes) + Math.min(1, Math.max(0, t)) * (Math.log(b.bytes) - Math.log(a.bytes)));
  return { ratio: ours.bytes / bytes };
}

/** BENCH_JPEG_SETTINGS: `{"trellis":[base,knee(,chroma base)],"flat":[λ‰ the flattest blocks go without,energy it is back by],"model":[adapt(,prior,eob‰,tilt‰,wide)],"aq":[luma‰,knee/100(,chroma‰,gate‰)],"scale":[luma‰(,chroma‰)],"align":[tables(,rule,factor‰)],"sharpen":[‰(,where)],"luma":[b,s(,c)],"chroma":[b,s(,c)],"cr":[b,s(,c)]}`, each optional (tables at quality 50, chroma's for Cb and Cr unless "cr" gives Cr's: b × (1 + s d + c d²), d = u + v; or 64 entries; model: the trellis's rate model and distortion tilt, wasm/src/sr_trellis.c; aq: wasm/src/sr_aq.c; scale: the anchors' bases; align, sharpen: sr_set_align, sr_set_chroma_sharpen; wasm/src/sr_quality.c). */
function applySettings({ m, memory }: NodeEngine): string {
  const raw = process.env.BENCH_JPEG_SETTINGS;
  if (!raw) return 'shipped';
  const s = JSON.parse(raw) as Record<string, number[]>;
  if (s.trellis) m._sr_set_trellis!(s.trellis[0]!, s.trellis[1]!, s.trellis[2] ?? 0);
  if (s.flat) m._sr_set_trellis_flat!(s.flat[0]!, s.flat[1]!);
  if (s.model)
    m._sr_set_trellis_model!(s.model[0]!, s.model[1] ?? 4096, s.model[2] ?? 1000, s.model[3] ?? 0, s.model[4] ?? 0);
  if (s.aq) m._sr_set_aq!(s.aq[0]!, s.aq[1]!, s.aq[2] ?? 0, s.aq[3] ?? 0);
  if (s.scale) m._sr_set_table_scale!(s.scale[0]!, s.scale[1] ?? s.scale[0]!);
  if (s.align) m._sr_set_align!(s.align[0]!, s.align[1] ?? 0, s.align[2] ?? 500);
  if (s.sharpen) m._sr_set_chroma_sharpen!(s.sharpen[0]!, s.sharpen[1] ?? 1);
  if (s.luma && s.chroma) {
    const ptr = m._malloc!(384);
    const table = (v: number[]) =>
      v.length === 64
        ? v
        : Array.from({ length: 64 }, (_, i) =>
            Math.round(v[0]! * (1 + v[1]! * ((i >> 3) + (i & 7)) + (v[2] ?? 0) * ((i >> 3) + (i & 7)) ** 2)),
          );
    new Uint16Array(memory.buffer, ptr, 192).set([...table(s.luma), ...table(s.chroma), ...table(s.cr ?? s.chroma)]);
    m._sr_set_quant_tables!(ptr, ptr + 128, ptr + 256);
    m._free!(ptr);
  }
  return raw;
}

interface Entry {
  name: string;
  set: CameraResult['set'];
  path: string;
}

async function entries(): Promise<Entry[]> {
  const only = process.env.BENCH_CAMERA_ONLY ? new RegExp(process.env.BENCH_CAMERA_ONLY) : undefined;
  const max = Number(process.env.BENCH_CAMERA_MAX ?? 1000);
  const spread = <T>(items: T[], cap: number) =>
    items.length <= cap ? items : Array.from({ length: cap }, (_, i) => items[Math.floor((i * items.length) / cap)]!);
  const camera = spread(
    readdirSync(CAMERA_DIR)
      .filter((f) => /\.jpe?g$/i.test(f))
      .sort(),
    max,
  ).map((f) => ({ name: f, set: 'camera' as const, path: join(CAMERA_DIR, f) }));
  const wallpaperMax = Number(process.env.BENCH_CAMERA_WALLPAPERS ?? 1000);
  const wallpapers =
    wallpaperMax < 1
      ? []
      : spread(
          (await loadCorpus(1000)).images.filter((i) => i.type === 'jpeg'),
          wallpaperMax,
        ).map((i) => ({ name: i.name, set: 'wallpaper' as const, path: i.path }));
  return [...camera, ...wallpapers].filter((e) => !only || only.test(e.name));
}

export async function benchJpegCamera(): Promise<{ header: string; settings: string; results: CameraResult[] }> {
  const t0 = performance.now();
  const t = tools();
  const e = await nodeEngine();
  const settings = applySettings(e);
  const timing = process.env.BENCH_CAMERA_TIME !== '0';
  const jpegli = jpegliTool();
  const results: CameraResult[] = [];
  for (const entry of await entries()) {
    const input = new Uint8Array(readFileSync(entry.path));
    const meta = await sharp(input).metadata();
    const orientation = meta.orientation ?? 1;
    const s = await scorer(t, input);
    try {
      const moz = mozSteps(input, s.score);
      const r: CameraResult = {
        name: entry.name,
        set: entry.set,
        width: meta.width,
        height: meta.height,
        orientation,
        mode: 'progressive',
        moz: [],
        ours: [],
        calibrations: {},
      };
      for (const quality of QUALITIES) {
        const subsample = quality < FULL_CHROMA_QUALITY;
        const samples = (meta.channels ?? 3) === 1 ? 1 : subsample ? 1.5 : 3;
        r.mode = 2 * meta.width * meta.height * samples <= PROGRESSIVE_MAX_BUFFER_BYTES ? 'progressive' : 'two_pass';
        const started = performance.now();
        const out = engineJpegFromJpeg(e, input, quality, { orientation, subsample, mode: r.mode });
        if (quality === 80 && timing) {
          r.oursMs = performance.now() - started;
          const s0 = performance.now();
          await mozjpeg(input, 80);
          r.sharpMs = performance.now() - s0;
        }
        // Scored with the input's ICC profile, as the service keeps it (the engine's encode here writes no
        // markers); its bytes are not counted, MozJPEG's output (converted to sRGB by sharp) having none.
        const score = { ...(await s.score(withIcc(out, input))), bytes: out.byteLength };
        const ratios = {} as Record<Metric, Ratio>;
        for (const m of METRICS) ratios[m] = await ratioAt(m, score, moz.at);
        r.ours.push({ quality, ...score, ratios });
        if (MOZ_STEPS.includes(quality))
          r.calibrations[quality] = score.ssimulacra2 - (await moz.at(MOZ_STEPS.indexOf(quality))).ssimulacra2;
        if (quality === 80) r.calibration = r.calibrations[80];
      }
      if (jpegli) {
        // One metric at a time: a MozJPEG step not yet measured is encoded once, not by two searches at once.
        const rate = async (sc: Score) => {
          const ratios = {} as Record<Metric, Ratio>;
          for (const m of METRICS) ratios[m] = await ratioAt(m, sc, moz.at);
          return ratios;
        };
        const mozAt = async (q: number) => (MOZ_STEPS.includes(q) ? moz.at(MOZ_STEPS.indexOf(q)) : undefined);
        r.jpegli = await measureJpegli(jpegli, await decodeRgb(input), QUALITIES, s.score, rate, mozAt);
        log(
          `jpeg-camera: ${entry.name}: jpegli ${r.jpegli.map((j) => `q${j.quality} ${METRICS.map((m) => fmtRatio(j.ratios[m])).join(' ')} cal ${j.calibration?.toFixed(2)}`).join(' | ')}`,
        );
      }
      r.moz = moz.measured();
      results.push(r);
      log(
        `jpeg-camera: ${entry.name}: calibration ${Object.entries(r.calibrations)
          .map(([q, c]) => `q${q} ${c.toFixed(2)}`)
          .join(
            ' ',
          )}; ${r.ours.map((o) => `q${o.quality} ${METRICS.map((m) => fmtRatio(o.ratios[m])).join(' ')}`).join(' | ')}`,
      );
    } catch (err) {
      log(`jpeg-camera: ${entry.name}: ${(err as Error).message}`);
    } finally {
      s.close();
    }
  }
  const header =
    `Ours: the engine's WebAssembly in Node ${process.version} (full size, upright, 4:2:0 below quality ${FULL_CHROMA_QUALITY} and 4:4:4 from ${FULL_CHROMA_QUALITY}, progressive while the coefficients fit in 48 MB, else two-pass), settings: ${settings}. ` +
    `MozJPEG: sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}, 1 thread) \`jpeg({ quality, mozjpeg: true })\`, 4:2:0, at quality ${MOZ_STEPS.join(', ')}. ` +
    `Scores on the centre ${CROP}×${CROP} crop of the upright decoded original and output: SSIMULACRA2 (libjxl 0.11.2 tool), butteraugli max-norm (Debian), SSIM (lib/ssim.ts, RGB). ` +
    `Ratio: our bytes ÷ MozJPEG's bytes at our score, interpolated in log bytes between the bracketing steps (≤ / ≥: our score is outside MozJPEG's steps). Bench time ${((performance.now() - t0) / 1000).toFixed(0)} s.`;
  return { header, settings, results };
}

const fmtRatio = (r: Ratio) => `${r.bound ?? ''}${r.ratio.toFixed(3)}`;

/** Medians per quality and metric over one set. */
export function medians(
  results: CameraResult[],
): { quality: number; ratios: Record<Metric, number>; worst: Record<Metric, { ratio: number; name: string }> }[] {
  return QUALITIES.map((quality) => {
    const at = results.map((r) => ({ name: r.name, o: r.ours.find((o) => o.quality === quality)! })).filter((x) => x.o);
    const ratios = Object.fromEntries(METRICS.map((m) => [m, median(at.map((x) => x.o.ratios[m].ratio))])) as Record<
      Metric,
      number
    >;
    const worst = Object.fromEntries(
      METRICS.map((m) => {
        const w = at.reduce((a, b) => (b.o.ratios[m].ratio > a.o.ratios[m].ratio ? b : a));
        return [m, { ratio: w.o.ratios[m].ratio, name: w.name }];
      }),
    ) as Record<Metric, { ratio: number; name: string }>;
    return { quality, ratios, worst };
  });
}

export function jpegCameraReport({ header, results }: Awaited<ReturnType<typeof benchJpegCamera>>): string {
  const lines = [header, ''];
  for (const set of ['camera', 'wallpaper'] as const) {
    const rows = results.filter((r) => r.set === set);
    if (rows.length === 0) continue;
    lines.push(
      `${set === 'camera' ? 'Camera photos' : 'Wallpapers'} (${rows.length}): bytes ÷ MozJPEG's at equal SSIMULACRA2 / butteraugli / SSIM`,
      '',
      `| photo | MP | ${QUALITIES.map((q) => `q${q} S2 | q${q} BA | q${q} SSIM`).join(' | ')} | q80 S2 − Moz q80 | ms ours / sharp |`,
      `|---|---:|${QUALITIES.map(() => '---:|---:|---:').join('|')}|---:|---:|`,
      ...rows.map(
        (r) =>
          `| ${r.name} | ${((r.width * r.height) / 1e6).toFixed(1)} | ${QUALITIES.map((q) => {
            const o = r.ours.find((x) => x.quality === q);
            return o ? METRICS.map((m) => fmtRatio(o.ratios[m])).join(' | ') : '– | – | –';
          }).join(
            ' | ',
          )} | ${r.calibration?.toFixed(1) ?? '–'} | ${r.oursMs === undefined ? '–' : `${r.oursMs.toFixed(0)} / ${r.sharpMs!.toFixed(0)}`} |`,
      ),
    );
    const med = medians(rows);
    const cal = rows.map((r) => r.calibration).filter((c): c is number => c !== undefined);
    const times = rows.filter((r) => r.oursMs !== undefined);
    lines.push(
      `| **median** | | ${med.map((x) => METRICS.map((m) => `**${x.ratios[m].toFixed(3)}**`).join(' | ')).join(' | ')} | **${cal.length ? median(cal).toFixed(1) : '–'}** | ` +
        `${times.length ? `**${median(times.map((r) => r.oursMs! / r.sharpMs!)).toFixed(2)}×**` : '–'} |`,
      '',
      `Our SSIMULACRA2 − MozJPEG's at the same quality, median: ${QUALITIES.filter((q) => MOZ_STEPS.includes(q))
        .map(
          (q) =>
            `q${q} ${median(rows.map((r) => r.calibrations[q]).filter((c): c is number => c !== undefined)).toFixed(2)}`,
        )
        .join(', ')}`,
      '',
      ...med.map(
        (x) =>
          `q${x.quality} worst: ${METRICS.map((m) => `${m} ${x.worst[m].ratio.toFixed(3)} (${x.worst[m].name})`).join('; ')}`,
      ),
      '',
      ...jpegliReport(jpegliTool()?.label ?? '', QUALITIES, rows),
    );
  }
  return lines.join('\n');
}

// Run directly (`node test/bench/jpeg-camera.ts`) for the tuning loop: no service is started.
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchJpegCamera();
  console.log(`\n${jpegCameraReport(result)}`);
  if (process.env.BENCH_CAMERA_JSON) writeFileSync(process.env.BENCH_CAMERA_JSON, JSON.stringify(result, null, 2));
}
