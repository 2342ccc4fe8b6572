// `npm run bench -- jpeg-tuning`: the engine's quantisation settings compared on the corpus JPEGs, by
// bytes at equal SSIM against sharp's mozjpeg q80 (the figures behind wasm/src/sr_quality.c's tables,
// scan script and rounding, and sr_trellis.c's λ). Runs the engine's WebAssembly directly in this process, in its progressive mode at full
// size, so only the encoder's settings differ between the rows.
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { loadCorpus } from './lib/corpus.ts';
import { jobOutput, nodeEngine, type NodeEngine } from './lib/engine-node.ts';
import { decodeRgb, ssim, type Rgb } from './lib/ssim.ts';

/** Tables at quality 50 in natural order, q(u, v) = round(b × (1 + s × (u + v))): the family tuned over. */
function table(base: number, slope: number): number[] {
  const out: number[] = [];
  for (let v = 0; v < 8; v++) for (let u = 0; u < 8; u++) out.push(Math.max(1, Math.min(255, Math.round(base * (1 + slope * (u + v))))));
  return out;
}

export interface Setting {
  name: string;
  /** null: libjpeg's Annex K tables. */
  tables: { luma: [number, number]; chroma: [number, number] } | null;
  /** Dead zone in thousandths of a step (luma, chroma). */
  deadzone: [number, number];
  /** Trellis λ base (thousandths of a step² per bit) and energy knee; base 0 is off. */
  trellis: [number, number];
  /** Our scan script (true) or libjpeg's jpeg_simple_progression. */
  ownScans: boolean;
  /** Staggered rounding of the scaled tables (true) or libjpeg's. */
  dither: boolean;
}

const GENTLE = { luma: [12, 0.1] as [number, number], chroma: [14, 0.15] as [number, number] };
const FINE_CHROMA = { luma: [16, 0.1] as [number, number], chroma: [11, 0.1] as [number, number] };
const OFF: [number, number] = [0, 1];
export const SETTINGS: Setting[] = [
  { name: 'Annex K, no dead zone', tables: null, deadzone: [0, 0], trellis: OFF, ownScans: false, dither: false },
  { name: 'gentle tables, no dead zone', tables: GENTLE, deadzone: [0, 0], trellis: OFF, ownScans: false, dither: false },
  { name: 'gentle tables, dead zone 0.2 (shipped before trellis)', tables: GENTLE, deadzone: [200, 200], trellis: OFF, ownScans: false, dither: false },
  { name: 'gentle tables, trellis', tables: GENTLE, deadzone: [0, 0], trellis: [60, 600], ownScans: false, dither: false },
  { name: 'gentle tables, trellis, our scans', tables: GENTLE, deadzone: [0, 0], trellis: [60, 600], ownScans: true, dither: false },
  { name: 'gentle tables, trellis, our scans, staggered rounding', tables: GENTLE, deadzone: [0, 0], trellis: [60, 600], ownScans: true, dither: true },
  { name: 'finer chroma (luma 16, chroma 11, slope 0.1), trellis, our scans, staggered (shipped)', tables: FINE_CHROMA, deadzone: [0, 0], trellis: [60, 600], ownScans: true, dither: true },
  { name: 'the same, trellis λ base 40', tables: FINE_CHROMA, deadzone: [0, 0], trellis: [40, 600], ownScans: true, dither: true },
  { name: 'the same, trellis λ base 90', tables: FINE_CHROMA, deadzone: [0, 0], trellis: [90, 600], ownScans: true, dither: true },
];

function apply({ m, memory }: NodeEngine, setting: Setting): void {
  m._sr_set_deadzone!(...setting.deadzone);
  m._sr_set_trellis!(...setting.trellis);
  m._sr_set_scans!(setting.ownScans ? 1 : 0);
  m._sr_set_dither!(setting.dither ? 1 : 0);
  if (!setting.tables) {
    m._sr_set_quant_tables!(0, 0);
    return;
  }
  const luma = m._malloc!(128);
  const chroma = m._malloc!(128);
  new Uint16Array(memory.buffer, luma, 64).set(table(...setting.tables.luma));
  new Uint16Array(memory.buffer, chroma, 64).set(table(...setting.tables.chroma));
  m._sr_set_quant_tables!(luma, chroma);
  m._free!(luma);
  m._free!(chroma);
}

/** The engine's progressive encode of the whole image at `quality`. */
function encode(e: NodeEngine, input: Uint8Array, quality: number): Uint8Array {
  const { m, memory } = e;
  const inputPtr = m._malloc!(input.length);
  new Uint8Array(memory.buffer).set(input, inputPtr);
  const job = m._sr_job_create!(inputPtr, input.length);
  try {
    if (m._sr_job_header!(job) !== 0) throw new Error('header refused');
    const info = new Int32Array(memory.buffer, m._sr_job_info!(job), 2);
    const [width, height] = [info[0]!, info[1]!];
    m._sr_job_close_header!(job);
    m._sr_job_set_pixels!(job, 8, width, height, 1);
    if (m._sr_job_encode!(job, quality, quality < 90 ? 1 : 0, 0) !== 0) throw new Error('encode failed');
    return jobOutput(e, job);
  } finally {
    m._sr_job_destroy!(job);
    m._free!(inputPtr);
  }
}

/** Bytes of the lowest quality whose SSIM reaches `target` (binary search over 50–98), or null. */
async function bytesAtSsim(e: NodeEngine, input: Uint8Array, reference: Rgb, target: number): Promise<number | null> {
  let lo = 50;
  let hi = 98;
  let found: number | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const out = encode(e, input, mid);
    if (ssim(reference, await decodeRgb(out)) >= target) {
      found = out.length;
      hi = mid - 1;
    } else lo = mid + 1;
  }
  return found;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] ?? NaN;

export async function benchJpegTuning(): Promise<{ images: number; rows: { name: string; median: number; max: number }[] }> {
  const corpus = (await loadCorpus(Number(process.env.BENCH_CORPUS_MAX ?? 40))).images.filter((i) => i.type === 'jpeg');
  const e = await nodeEngine();
  const ratios = new Map<string, number[]>(SETTINGS.map((s) => [s.name, []]));
  for (const image of corpus) {
    const input = new Uint8Array(readFileSync(image.path));
    const reference = await decodeRgb(input);
    const sharpOut = await sharp(input).jpeg({ quality: 80, mozjpeg: true }).toBuffer();
    const target = ssim(reference, await decodeRgb(sharpOut));
    for (const setting of SETTINGS) {
      apply(e, setting);
      const bytes = await bytesAtSsim(e, input, reference, target);
      if (bytes !== null) ratios.get(setting.name)!.push(bytes / sharpOut.length);
    }
    console.log(`jpeg-tuning: ${image.name} done`);
  }
  return { images: corpus.length, rows: SETTINGS.map((s) => ({ name: s.name, median: median(ratios.get(s.name)!), max: Math.max(...ratios.get(s.name)!) })) };
}
