// `npm run bench -- jxl`: JPEG XL output (wasm/codec/sr_jxl.*, run in this process) against our JPEG and
// AVIF, and the lossless JPEG transcode. Three parts:
// - quality: on the camera photos (../shared/corpus/camera/) at width 2048, as quality-scale.ts measures
//   them (the engine's decode and resize, each encoder fed the same rows, SSIMULACRA2 against them, cached
//   in $TMPDIR), JPEG, AVIF and JXL at the API's q60/80/90 mapped by src/compress/quality-scale.ts: bytes,
//   score and encode time per photo, and the medians;
// - lossless: every photo's original file (the whole corpus) as format=jxl&lossless=true writes it (JXL_LOSSLESS_EFFORT):
//   bytes ÷ the JPEG's, time, the module's peak, and whether Debian's djxl rebuilds the JPEG byte for byte;
// - memory (BENCH_JXL_MEMORY=1: this part alone): the module's peak for synthetic photos of 12 and 24 MP
//   (BENCH_JXL_MP) at each effort of BENCH_JXL_EFFORTS (3,5,7), RGB, at q80's distance.
// BENCH_QS_PHOTOS=n takes n photos spread over the corpus (the machine is slow: 6 is a few minutes).
// Needs djxl (apt-get install libjxl-tools).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { JXL_EFFORT, JXL_LOSSLESS_EFFORT, jxlPeakBytes } from '../../src/compress/jxl/settings.ts';
import { encoderQuality } from '../../src/compress/quality-scale.ts';
import type { Raw } from './lib/avif-node.ts';
import { dimensionsFor, syntheticPhoto } from './lib/images.ts';
import { encodeJxl, transcodeJpegToJxl } from './lib/jxl-node.ts';
import { median } from './lib/load.ts';
import { type LossyFormat, type Measure, QUALITIES, QualityScaleBench, WIDTH } from './quality-scale.ts';

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

export interface JxlResult {
  width: number;
  effort: number;
  rows: { name: string; cells: Record<LossyFormat, Record<number, Measure & { encoder: number }>> }[];
  medians: { format: LossyFormat; q: number; score: number; bytesRatio: number; ms: number }[];
  lossless: { name: string; bytes: number; ratio: number; ms: number; peakMiB: number; rebuilt: boolean }[];
  memory: JxlMemoryRow[];
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
  const bench = await QualityScaleBench.open();
  const rows: JxlResult['rows'] = [];
  for (const photo of bench.photos) {
    const cells = {} as JxlResult['rows'][number]['cells'];
    for (const f of FORMATS) {
      cells[f] = {};
      for (const q of QUALITIES) {
        const encoder = encoderQuality(f, q);
        cells[f][q] = { ...(await bench.measure(photo, f, encoder)), encoder };
      }
    }
    rows.push({ name: photo.name, cells });
  }
  const medians = FORMATS.flatMap((format) =>
    QUALITIES.map((q) => ({
      format,
      q,
      score: median(rows.map((r) => r.cells[format][q]!.score)),
      bytesRatio: median(rows.map((r) => r.cells[format][q]!.bytes / r.cells.jpeg[q]!.bytes)),
      ms: median(rows.map((r) => r.cells[format][q]!.ms)),
    })),
  );
  // Every photo of the corpus: a transcode is quick, and the ratio is asked of the whole corpus.
  const lossless = await benchLossless(
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
  lines.push(
    `${r.rows.length} camera photos at width ${r.width}; JXL effort ${r.effort}.`,
    '',
    '| format | q | encoder | median SSIMULACRA2 | median bytes ÷ JPEG | median encode ms |',
    '|---|---:|---:|---:|---:|---:|',
  );
  for (const q of QUALITIES)
    for (const m of r.medians.filter((x) => x.q === q))
      lines.push(
        `| ${m.format} | ${q} | ${encoderQuality(m.format, q)} | ${m.score.toFixed(2)} | ${m.bytesRatio.toFixed(3)} | ${m.ms.toFixed(0)} |`,
      );
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
