// `npm run bench -- jxl`: JPEG XL output (wasm/codec/sr_jxl.*, run in this process) against our JPEG and
// AVIF, and the lossless JPEG transcode. Three parts:
// - quality: on the camera photos (../shared/corpus/camera/) at width 2048, each photo through the engine
//   as quality-scale.ts takes it (the DCT-scaled decode, the resampler and the orientation, each encoder fed
//   the same rows), JPEG, AVIF and JXL at the API's q60/80/90 mapped by src/compress/quality-scale.ts. Every
//   encode runs in this run, a photo's three formats one after another at each q, so their times are side
//   by side under the same load; each is timed from its fresh instances to its output (the decode and
//   resize included, as in the service). Each encode's peak growth is its module's memory growth on a fresh
//   instance (the compiled module kept, an instance per encode; memory.buffer.byteLength at the end less a
//   fresh instance's): for JPEG the engine, which decodes and encodes in one job; for AVIF and JXL their own
//   module, beside which a cold request also grows the engine for the rows (reported once, per photo).
//   One untimed encode of each format first (V8's lazy compilation). All encodes, then the scores
//   (SSIMULACRA2, two at a time), so scoring does not slow the encodes.
//   A score comes from the cache in $TMPDIR (quality-scale.ts's) when the encoded bytes' digest was scored
//   before against the same reference: SSIMULACRA2 is deterministic, so the same bytes score the same.
//   BENCH_JXL_LOSSLESS=0 skips the next part;
// - lossless: every photo's original file (the whole corpus) as format=jxl&lossless=true writes it (JXL_LOSSLESS_EFFORT):
//   bytes ÷ the JPEG's, time, the module's peak, and whether Debian's djxl rebuilds the JPEG byte for byte;
// - memory (BENCH_JXL_MEMORY=1: this part alone): the module's peak for synthetic photos of 12 and 24 MP
//   (BENCH_JXL_MP) at each effort of BENCH_JXL_EFFORTS (3,5,7), RGB, at q80's distance.
// BENCH_QS_PHOTOS=n takes n photos spread over the corpus (the machine is slow: all 31 at 2048 took 30 minutes of
// encodes and 4 of scores at a load of 2–8; 6 photos a few minutes).
// Needs djxl (apt-get install libjxl-tools).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { JXL_EFFORT, JXL_LOSSLESS_EFFORT, jxlPeakBytes } from '../../src/compress/jxl/settings.ts';
import { encoderQuality } from '../../src/compress/quality-scale.ts';
import type { Raw } from './lib/avif-node.ts';
import { dimensionsFor, syntheticPhoto } from './lib/images.ts';
import { nodeEngine, nodeModule } from './lib/engine-node.ts';
import { encodeJxl, JXL_CODEC, transcodeJpegToJxl } from './lib/jxl-node.ts';
import { median } from './lib/load.ts';
import { encodePhoto, type LossyFormat, type Photo, QUALITIES, QualityScaleBench, WIDTH } from './quality-scale.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const log = (line: string) => console.error(line);
const FORMATS: LossyFormat[] = ['jpeg', 'avif', 'jxl'];
const root = resolve(new URL('../../', import.meta.url).pathname);
const CORPUS =
  [resolve(root, '../shared/corpus/camera'), resolve(root, '../../shared/corpus/camera')].find(existsSync) ?? '';

export interface JxlMemoryRow {
  megapixels: number;
  width: number;
  height: number;
  effort: number;
  ms: number;
  filledMiB: number;
  peakMiB: number;
  estimateMiB: number;
}

/** One encode of this run: its bytes, score, time and peak growth. */
export interface JxlCell {
  encoder: number;
  bytes: number;
  score: number;
  ms: number;
  /** The encoding module's growth on a fresh instance (for JPEG the engine's, decode included). */
  peakMiB: number;
}

export interface JxlResult {
  width: number;
  effort: number;
  rows: {
    name: string;
    width: number;
    height: number;
    /** The engine's growth on a fresh instance for the rows it hands AVIF and JXL (the same at every q). */
    rowsMiB: number;
    cells: Record<LossyFormat, Record<number, JxlCell>>;
  }[];
  medians: {
    format: LossyFormat;
    q: number;
    encoder: number;
    bytesRatio: number;
    score: number;
    scoreDiff: number;
    ms: number;
    peakMiB: number;
    maxPeakMiB: number;
  }[];
  lossless: { name: string; bytes: number; ratio: number; ms: number; peakMiB: number; rebuilt: boolean }[];
  memory: JxlMemoryRow[];
}

// BENCH_AVIF_CODEC as test/bench/lib/avif-node.ts reads it, so the baseline is the encoding build's.
const AVIF_CODEC = process.env.BENCH_AVIF_CODEC
  ? new URL(`file://${resolve(process.env.BENCH_AVIF_CODEC)}/`)
  : new URL('../../wasm/codec/', import.meta.url);

/** A fresh instance's memory, the size each encode's growth is counted from. */
async function freshBytes(name: string, codec: URL): Promise<number> {
  const { memory } = await nodeModule(new URL(`${name}.wasm`, codec), new URL(`${name}.js`, codec).href);
  return memory.buffer.byteLength;
}

interface Encoded {
  output: Uint8Array;
  ms: number;
  peakMiB: number;
  rowsMiB: number;
}

/** One encode cold: a fresh engine (and a fresh AVIF or JXL instance inside encodePhoto), timed from its start. */
async function encodeCold(
  photo: Photo,
  format: LossyFormat,
  encoder: number,
  start: Record<'jpeg' | 'avif' | 'jxl', number>,
): Promise<Encoded> {
  const t0 = performance.now();
  const engine = await nodeEngine();
  const r = await encodePhoto(engine, photo, format, encoder);
  const ms = performance.now() - t0;
  const engineGrowth = engine.memory.buffer.byteLength - start.jpeg;
  if (format === 'jpeg') return { output: r.output, ms, peakMiB: engineGrowth / MiB, rowsMiB: 0 };
  const module = r.modulePeakBytes! - start[format as 'avif' | 'jxl'];
  return { output: r.output, ms, peakMiB: module / MiB, rowsMiB: engineGrowth / MiB };
}

async function benchQuality(): Promise<Pick<JxlResult, 'rows' | 'medians'>> {
  const bench = await QualityScaleBench.open();
  const start = {
    jpeg: (await nodeEngine()).memory.buffer.byteLength,
    avif: await freshBytes('sr_avif', AVIF_CODEC),
    jxl: await freshBytes('sr_jxl', JXL_CODEC),
  };
  log(
    `${bench.photos.length} photos at width ${WIDTH}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  // V8 compiles wasm lazily and optimises hot functions later: one encode of each format, not counted, so the
  // first photo's times are not the compiler's.
  for (const format of FORMATS) await encodeCold(bench.photos[0]!, format, encoderQuality(format, 80), start);
  // Every encode first, one at a time; then the scores, so the scorers' processes share no core with an encode.
  const encoded: { photo: Photo; format: LossyFormat; q: number; encoder: number; e: Encoded }[] = [];
  const rowsMiB = new Map<string, number>();
  for (const photo of bench.photos) {
    for (const q of QUALITIES)
      for (const format of FORMATS) {
        const encoder = encoderQuality(format, q);
        const e = await encodeCold(photo, format, encoder, start);
        if (format !== 'jpeg') rowsMiB.set(photo.name, Math.max(rowsMiB.get(photo.name) ?? 0, e.rowsMiB));
        encoded.push({ photo, format, q, encoder, e });
        log(
          `${photo.name} ${format} q${q} (${encoder}): ${e.output.length} B ${e.ms.toFixed(0)} ms, peak growth ${e.peakMiB.toFixed(1)} MiB` +
            (format === 'jpeg' ? '' : ` (+ ${e.rowsMiB.toFixed(1)} MiB the engine's rows)`),
        );
      }
    log(
      `load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  }
  const scores = await Promise.all(
    encoded.map(({ photo, format, e }) => bench.scoreBytes(photo, format, e.output, e.ms)),
  );
  const rows: JxlResult['rows'] = bench.photos.map((photo) => ({
    name: photo.name,
    ...photo.output,
    rowsMiB: rowsMiB.get(photo.name) ?? 0,
    cells: { jpeg: {}, webp: {}, avif: {}, jxl: {} },
  }));
  encoded.forEach(({ photo, format, q, encoder, e }, i) => {
    rows.find((r) => r.name === photo.name)!.cells[format][q] = {
      encoder,
      bytes: e.output.length,
      score: scores[i]!,
      ms: e.ms,
      peakMiB: e.peakMiB,
    };
  });
  const medians = QUALITIES.flatMap((q) =>
    FORMATS.map((format) => {
      const cells = rows.map((r) => ({ c: r.cells[format][q]!, j: r.cells.jpeg[q]! }));
      return {
        format,
        q,
        encoder: encoderQuality(format, q),
        bytesRatio: median(cells.map(({ c, j }) => c.bytes / j.bytes)),
        score: median(cells.map(({ c }) => c.score)),
        scoreDiff: median(cells.map(({ c, j }) => c.score - j.score)),
        ms: median(cells.map(({ c }) => c.ms)),
        peakMiB: median(cells.map(({ c }) => c.peakMiB)),
        maxPeakMiB: Math.max(...cells.map(({ c }) => c.peakMiB)),
      };
    }),
  );
  return { rows, medians };
}

async function benchMemory(): Promise<JxlMemoryRow[]> {
  const rows: JxlMemoryRow[] = [];
  const efforts = (process.env.BENCH_JXL_EFFORTS ?? '3,5,7').split(',').map(Number);
  for (const megapixels of (process.env.BENCH_JXL_MP ?? '12,24').split(',').map(Number)) {
    const { width, height } = dimensionsFor(megapixels);
    const photo = await syntheticPhoto(megapixels);
    const decoded = await sharp(photo.path).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const raw: Raw = { data: new Uint8Array(decoded.data), width, height, channels: 3 };
    for (const effort of efforts) {
      const r = await encodeJxl(raw, encoderQuality('jxl', 80), effort);
      const row = {
        megapixels,
        width,
        height,
        effort,
        ms: r.ms,
        filledMiB: r.filledBytes / MiB,
        peakMiB: r.peakBytes / MiB,
        estimateMiB: jxlPeakBytes(width, height, 3) / MiB,
      };
      rows.push(row);
      log(
        `${megapixels} MP ${width}×${height} effort ${effort}: ${r.ms.toFixed(0)} ms, ${row.filledMiB.toFixed(1)} MiB after the rows, ` +
          `peak ${row.peakMiB.toFixed(1)} MiB (estimate ${row.estimateMiB.toFixed(1)}), ${r.output.length} B`,
      );
    }
  }
  return rows;
}

async function benchLossless(names: string[]): Promise<JxlResult['lossless']> {
  const dir = mkdtempSync(join(tmpdir(), 'jxl-lossless-'));
  const rows: JxlResult['lossless'] = [];
  try {
    for (const name of names) {
      const jpeg = new Uint8Array(readFileSync(join(CORPUS, name)));
      const r = await transcodeJpegToJxl(jpeg, JXL_LOSSLESS_EFFORT);
      writeFileSync(join(dir, 'a.jxl'), r.output);
      await run('djxl', [join(dir, 'a.jxl'), join(dir, 'a.jpg'), '--quiet']);
      const rebuilt = Buffer.compare(readFileSync(join(dir, 'a.jpg')), Buffer.from(jpeg)) === 0;
      const row = {
        name,
        bytes: r.output.length,
        ratio: r.output.length / jpeg.length,
        ms: r.ms,
        peakMiB: r.peakBytes / MiB,
        rebuilt,
      };
      rows.push(row);
      log(
        `${name} lossless: ${row.ratio.toFixed(3)} × ${jpeg.length} B, ${r.ms.toFixed(0)} ms, peak ${row.peakMiB.toFixed(1)} MiB, rebuilt ${rebuilt}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export async function benchJxl(): Promise<JxlResult> {
  if (process.env.BENCH_JXL_MEMORY === '1')
    return { width: WIDTH, effort: JXL_EFFORT, rows: [], medians: [], lossless: [], memory: await benchMemory() };
  const { rows, medians } = await benchQuality();
  // Every photo of the corpus: a transcode is quick, and the ratio is asked of the whole corpus.
  const lossless =
    process.env.BENCH_JXL_LOSSLESS === '0'
      ? []
      : await benchLossless(
          readdirSync(CORPUS)
            .filter((f) => /\.jpe?g$/i.test(f))
            .sort(),
        );
  return { width: WIDTH, effort: JXL_EFFORT, rows, medians, lossless, memory: [] };
}

export function jxlReport(r: JxlResult): string {
  const lines: string[] = [];
  if (r.memory.length) {
    lines.push(
      '| MP | size | effort | ms | MiB after rows | peak MiB | plan MiB |',
      '|---:|---|---:|---:|---:|---:|---:|',
    );
    for (const m of r.memory)
      lines.push(
        `| ${m.megapixels} | ${m.width}×${m.height} | ${m.effort} | ${m.ms.toFixed(0)} | ${m.filledMiB.toFixed(1)} | ${m.peakMiB.toFixed(1)} | ${m.estimateMiB.toFixed(1)} |`,
      );
    return lines.join('\n');
  }
  const rowsMiB = r.rows.map((row) => row.rowsMiB);
  lines.push(
    `${r.rows.length} camera photos at width ${r.width}; JXL effort ${r.effort}; every encode in this run, a photo's ` +
      `formats one after another. Peak: the encoding module's growth on a fresh instance (JPEG: the engine, decode ` +
      `included); AVIF and JXL also grow the engine for their rows: median ${rowsMiB.length ? median(rowsMiB).toFixed(1) : '-'}, ` +
      `max ${rowsMiB.length ? Math.max(...rowsMiB).toFixed(1) : '-'} MiB.`,
    '',
    '| format | q | encoder | median bytes ÷ JPEG | median SSIMULACRA2 | median s2 − JPEG | median ms | median peak MiB | max peak MiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const m of r.medians)
    lines.push(
      `| ${m.format} | ${m.q} | ${m.encoder} | ${m.bytesRatio.toFixed(3)} | ${m.score.toFixed(2)} | ${m.format === 'jpeg' ? '' : m.scoreDiff.toFixed(2)} | ` +
        `${m.ms.toFixed(0)} | ${m.peakMiB.toFixed(1)} | ${m.maxPeakMiB.toFixed(1)} |`,
    );
  if (r.rows.length)
    lines.push(
      '',
      '| photo | size | q | JPEG bytes | s2 | ms | MiB | AVIF ÷ JPEG | s2 − JPEG | ms | MiB | JXL ÷ JPEG | s2 − JPEG | ms | MiB | rows MiB |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
  for (const row of r.rows)
    for (const q of QUALITIES) {
      const j = row.cells.jpeg[q]!;
      const other = (f: LossyFormat) => {
        const c = row.cells[f][q]!;
        return `${(c.bytes / j.bytes).toFixed(3)} | ${(c.score - j.score).toFixed(2)} | ${c.ms.toFixed(0)} | ${c.peakMiB.toFixed(1)}`;
      };
      lines.push(
        `| ${row.name} | ${row.width}×${row.height} | ${q} | ${j.bytes} | ${j.score.toFixed(2)} | ${j.ms.toFixed(0)} | ${j.peakMiB.toFixed(1)} | ` +
          `${other('avif')} | ${other('jxl')} | ${row.rowsMiB.toFixed(1)} |`,
      );
    }
  if (r.lossless.length)
    lines.push('', '| photo | lossless JXL ÷ JPEG | ms | peak MiB | djxl rebuilds it |', '|---|---:|---:|---:|---|');
  for (const l of r.lossless)
    lines.push(
      `| ${l.name} | ${l.ratio.toFixed(3)} | ${l.ms.toFixed(0)} | ${l.peakMiB.toFixed(1)} | ${l.rebuilt ? 'yes' : 'NO'} |`,
    );
  if (r.lossless.length) lines.push('', `Median lossless ratio: ${median(r.lossless.map((l) => l.ratio)).toFixed(3)}.`);
  return lines.join('\n');
}

// Run directly (`npx node test/bench/jxl.ts`): no service needed.
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchJxl();
  console.log(`\n${jxlReport(result)}\n`);
}
