// jpegli (libjxl's libjpeg-API encoder) as an optional third encoder in the camera bench, run natively from
// a binary the measurer builds outside the repository (BENCH_JPEGLI: cjpegli, or any program taking its
// flags and a binary PPM). It gets what MozJPEG gets: the upright decoded photo as sharp gives it
// (lib/ssim.ts decodeRgb), YCbCr (not XYB), 4:2:0, its own tables and adaptive quantisation, progressive
// level 2 (its default) and optimised Huffman codes, at the qualities ours is measured at; its output is
// scored on the same crop with the same three metrics and rated against MozJPEG's steps as ours is.
// BENCH_JPEGLI_FLAGS adds flags for an ablation (e.g. `--noadaptive_quantization`, `--std_quant`,
// `--chroma_subsampling=444`, `-p 0 --fixed_code`); the last subsampling flag wins.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median } from './load.ts';
import type { Rgb } from './ssim.ts';

const run = promisify(execFile);

export type JpegliMetric = 'ssimulacra2' | 'butteraugli' | 'ssim';
const METRICS: JpegliMetric[] = ['ssimulacra2', 'butteraugli', 'ssim'];

interface Scored {
  bytes: number;
  ssimulacra2: number;
  butteraugli: number;
  ssim: number;
}

/** One jpegli encode: its score and bytes ÷ MozJPEG's at that score (`bound` as the bench's Ratio). */
export interface JpegliResult extends Scored {
  quality: number;
  ratios: Record<JpegliMetric, { ratio: number; bound?: '≤' | '≥' }>;
  /** jpegli's SSIMULACRA2 minus MozJPEG's at the same quality (where MozJPEG has that step). */
  calibration?: number;
  /** The tool's wall time for the encode (PPM read and file write included), ms. */
  ms: number;
}

/** The binary and flags to run, or undefined when BENCH_JPEGLI is unset (jpegli is then not measured). */
export function jpegliTool(): { path: string; flags: string[]; label: string } | undefined {
  const path = process.env.BENCH_JPEGLI;
  if (!path) return undefined;
  const flags = (process.env.BENCH_JPEGLI_FLAGS ?? '').split(/\s+/).filter(Boolean);
  return { path, flags, label: flags.length ? flags.join(' ') : 'defaults' };
}

/** jpegli's encodes of one photo at each quality, scored and rated by the bench's own functions. */
export async function measureJpegli(
  tool: NonNullable<ReturnType<typeof jpegliTool>>,
  upright: Rgb,
  qualities: number[],
  score: (output: Uint8Array) => Promise<Scored>,
  rate: (score: Scored) => Promise<JpegliResult['ratios']>,
  mozAt: (quality: number) => Promise<Scored | undefined>,
): Promise<JpegliResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'shrinkray-jpegli-'));
  try {
    const ppm = join(dir, 'in.ppm');
    writeFileSync(ppm, Buffer.concat([Buffer.from(`P6\n${upright.width} ${upright.height}\n255\n`), upright.data]));
    const results: JpegliResult[] = [];
    for (const quality of qualities) {
      const out = join(dir, `q${quality}.jpg`);
      const started = performance.now();
      await run(tool.path, [ppm, out, '-q', String(quality), '--chroma_subsampling=420', ...tool.flags, '--quiet']);
      const ms = performance.now() - started;
      const scored = await score(new Uint8Array(readFileSync(out)));
      const moz = await mozAt(quality);
      results.push({
        quality,
        ...scored,
        ratios: await rate(scored),
        calibration: moz && scored.ssimulacra2 - moz.ssimulacra2,
        ms,
      });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (r: { ratio: number; bound?: string }) => `${r.bound ?? ''}${r.ratio.toFixed(2)}`;
const signed = (x: number | undefined) => (x === undefined ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(1)}`);
const at = <T extends { quality: number }>(list: T[] | undefined, quality: number) =>
  list?.find((x) => x.quality === quality);

interface Row {
  name: string;
  jpegli?: JpegliResult[];
  ours: { quality: number; ratios: JpegliResult['ratios'] }[];
  /** Ours: SSIMULACRA2 minus MozJPEG's at the same quality. */
  calibrations: Record<number, number>;
}

/**
 * Per photo, jpegli's bytes ÷ MozJPEG's at equal SSIMULACRA2 / butteraugli / SSIM beside ours from the
 * same run, and both calibrations; then the medians.
 */
export function jpegliReport(label: string, qualities: number[], rows: Row[]): string[] {
  const measured = rows.filter((r) => r.jpegli?.length);
  if (measured.length === 0) return [];
  const three = (x?: { ratios: JpegliResult['ratios'] }) =>
    x ? METRICS.map((m) => fmt(x.ratios[m])).join(' / ') : '–';
  const med = (pick: (r: Row) => number | undefined, digits: number) => {
    const values = measured.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? median(values).toFixed(digits) : '–';
  };
  const medRatios = (side: 'jpegli' | 'ours', q: number) =>
    METRICS.map(
      (m) =>
        `**${med((r) => at<{ quality: number; ratios: JpegliResult['ratios'] }>(r[side], q)?.ratios[m].ratio, 3)}**`,
    ).join(' / ');
  const cal = (j: number | undefined, o: number | undefined) => `${signed(j)}; ${signed(o)}`;
  return [
    `jpegli (${label}) beside ours, bytes ÷ MozJPEG's at equal SSIMULACRA2 / butteraugli / SSIM, and SSIMULACRA2 − MozJPEG's at the same quality (jpegli; ours):`,
    '',
    `| photo | ${qualities.map((q) => `q${q} jpegli | q${q} ours`).join(' | ')} | S2 − Moz ${qualities.map((q) => `q${q}`).join(' / ')} | jpegli ms q${qualities[0]} |`,
    `|---|${qualities.map(() => '---|---').join('|')}|---|---:|`,
    ...measured.map(
      (r) =>
        `| ${r.name} | ${qualities.map((q) => `${three(at(r.jpegli, q))} | ${three(at(r.ours, q))}`).join(' | ')} | ${qualities
          .map((q) => cal(at(r.jpegli, q)?.calibration, r.calibrations[q]))
          .join(' / ')} | ${r.jpegli![0]!.ms.toFixed(0)} |`,
    ),
    `| **median** | ${qualities.map((q) => `${medRatios('jpegli', q)} | ${medRatios('ours', q)}`).join(' | ')} | ${qualities
      .map((q) => `${med((r) => at(r.jpegli, q)?.calibration, 1)}; ${med((r) => r.calibrations[q], 1)}`)
      .join(' / ')} | |`,
    '',
  ];
}
