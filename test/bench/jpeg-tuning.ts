// `npm run bench -- jpeg-tuning`: the engine's quantisation settings compared on the corpus JPEGs and
// the jpeg bench's grainy 12 MP phone photo, by bytes at equal SSIM against sharp's mozjpeg q80 (the
// figures behind wasm/src/sr_quality.c's tables, scan script and rounding, and sr_trellis.c's λ). Runs
// the engine's WebAssembly directly in this process, in its progressive mode at full size, so only the
// encoder's settings differ between the rows. Each figure is given twice: at the lowest quality step
// that reaches sharp's SSIM (what the jpeg bench measures), and interpolated between that step and the
// one below, which does not jump with where one image's steps happen to fall (a step near quality 80 is
// 5 % of the quantiser and about 7 % of the bytes).
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { loadCorpus } from './lib/corpus.ts';
import { INPUT_SIZES, jpegInputs } from './lib/jpeg-inputs.ts';
import { bytesBetween, lowestPassing, type Scored } from './lib/jpeg-quality.ts';
import { median } from './lib/load.ts';
import { engineJpegFromJpeg, nodeEngine, type NodeEngine } from './lib/engine-node.ts';
import { decodeRgb, ssim, type Rgb } from './lib/ssim.ts';

/** Tables at quality 50 in natural order, q(u, v) = round(b × (1 + s × (u + v))): the family tuned over. */
function table(base: number, slope: number): number[] {
  const out: number[] = [];
  for (let v = 0; v < 8; v++)
    for (let u = 0; u < 8; u++) out.push(Math.max(1, Math.min(255, Math.round(base * (1 + slope * (u + v))))));
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
  /** No step finer than the input's where the blocks line up (sr_align_tables, factor 0); off when absent. */
  align?: boolean;
}

const GENTLE = { luma: [12, 0.1] as [number, number], chroma: [14, 0.15] as [number, number] };
const FINE_CHROMA = { luma: [16, 0.1] as [number, number], chroma: [11, 0.1] as [number, number] };
const HALF_CHROMA = { luma: [16, 0.1] as [number, number], chroma: [8, 0.1] as [number, number] };
const FLAT_LUMA = { luma: [19, 0.05] as [number, number], chroma: [9.5, 0.1] as [number, number] };
const OFF: [number, number] = [0, 1];
/** PLAIN: libjpeg's scans and rounding, no dead zone, no trellis; OURS: trellis, our scans, staggered rounding. */
const PLAIN = { deadzone: [0, 0] as [number, number], trellis: OFF, ownScans: false, dither: false };
const TRELLIS: [number, number] = [60, 600];
const OURS = { ...PLAIN, trellis: TRELLIS, ownScans: true, dither: true };
export const SETTINGS: Setting[] = [
  { ...PLAIN, name: 'Annex K, no dead zone', tables: null },
  { ...PLAIN, name: 'gentle tables, no dead zone', tables: GENTLE },
  { ...PLAIN, name: 'gentle tables, dead zone 0.2 (shipped before trellis)', tables: GENTLE, deadzone: [200, 200] },
  { ...PLAIN, name: 'gentle tables, trellis', tables: GENTLE, trellis: TRELLIS },
  { ...PLAIN, name: 'gentle tables, trellis, our scans', tables: GENTLE, trellis: TRELLIS, ownScans: true },
  { ...OURS, name: 'gentle tables, trellis, our scans, staggered rounding', tables: GENTLE },
  { ...OURS, name: 'finer chroma (luma 16, chroma 11, slope 0.1), trellis, our scans, staggered', tables: FINE_CHROMA },
  { ...OURS, name: 'the same, trellis λ base 40', tables: FINE_CHROMA, trellis: [40, 600] },
  { ...OURS, name: 'the same, trellis λ base 90', tables: FINE_CHROMA, trellis: [90, 600] },
  { ...OURS, name: "chroma at half luma's step (luma 16, chroma 8, slope 0.1)", tables: HALF_CHROMA },
  { ...OURS, name: 'and flatter luma (luma 19 slope 0.05, chroma 9.5 slope 0.1)', tables: FLAT_LUMA },
  { ...OURS, name: "and no step finer than the input's (shipped)", tables: FLAT_LUMA, align: true },
];

function apply({ m, memory }: NodeEngine, setting: Setting): void {
  m._sr_set_deadzone!(...setting.deadzone);
  m._sr_set_trellis!(...setting.trellis);
  m._sr_set_scans!(setting.ownScans ? 1 : 0);
  m._sr_set_dither!(setting.dither ? 1 : 0);
  // The rule as this table measured it: every step finer than the input's raised to it (factor 0). The
  // engine now raises only from half the input's step (sr_set_align(3, 0, 500), docs/image-engine.md).
  m._sr_set_align!(setting.align ? 3 : 0, 0, 0);
  if (!setting.tables) {
    m._sr_set_quant_tables!(0, 0, 0);
    return;
  }
  const luma = m._malloc!(128);
  const chroma = m._malloc!(128);
  new Uint16Array(memory.buffer, luma, 64).set(table(...setting.tables.luma));
  new Uint16Array(memory.buffer, chroma, 64).set(table(...setting.tables.chroma));
  m._sr_set_quant_tables!(luma, chroma, 0); // Cr takes chroma's
  m._free!(luma);
  m._free!(chroma);
}

/** The engine's progressive encode of the whole image at `quality` (4:2:0 below 90, as `quality < 90` always chose here). */
const encode = (e: NodeEngine, input: Uint8Array, quality: number): Uint8Array => engineJpegFromJpeg(e, input, quality);

/** One image under one setting, as a fraction of sharp's bytes. */
export interface AtSsim {
  /** The lowest quality step whose SSIM reaches the target. */
  step: number;
  /** Interpolated between that step and the one below, at the target's SSIM. */
  interpolated: number;
}

/** Bytes at sharp's SSIM (the lowest passing quality in 50–98, and interpolated below it), or null if none reaches it. */
async function bytesAtSsim(
  e: NodeEngine,
  input: Uint8Array,
  reference: Rgb,
  target: number,
  sharpBytes: number,
): Promise<AtSsim | null> {
  const probes = new Map<number, Scored>();
  const at = async (quality: number) => {
    let p = probes.get(quality);
    if (!p) {
      const out = encode(e, input, quality);
      p = { bytes: out.length, ssim: ssim(reference, await decodeRgb(out)) };
      probes.set(quality, p);
    }
    return p;
  };
  const found = await lowestPassing(at, target, 50, 98);
  if (found === null) return null;
  const pass = await at(found);
  const step = pass.bytes / sharpBytes;
  return { step, interpolated: found === 50 ? step : bytesBetween(await at(found - 1), pass, target) / sharpBytes };
}

const geomean = (values: number[]): number => Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length);

export interface TuningRow {
  name: string;
  median: number;
  max: number;
  interpolatedMedian: number;
  interpolatedGeomean: number;
  /** The jpeg bench's 12 MP baseline phone photo (grainy). */
  photo: AtSsim | null;
}

/** One input against every setting. */
async function measure(e: NodeEngine, input: Uint8Array): Promise<(AtSsim | null)[]> {
  const reference = await decodeRgb(input);
  const sharpOut = await sharp(input).jpeg({ quality: 80, mozjpeg: true }).toBuffer();
  const target = ssim(reference, await decodeRgb(sharpOut));
  const results: (AtSsim | null)[] = [];
  for (const setting of SETTINGS) {
    apply(e, setting);
    results.push(await bytesAtSsim(e, input, reference, target, sharpOut.length));
  }
  return results;
}

export async function benchJpegTuning(): Promise<{ images: number; rows: TuningRow[] }> {
  const corpus = (await loadCorpus(Number(process.env.BENCH_CORPUS_MAX ?? 40))).images.filter((i) => i.type === 'jpeg');
  const e = await nodeEngine();
  const perSetting: AtSsim[][] = SETTINGS.map(() => []);
  for (const image of corpus) {
    const results = await measure(e, new Uint8Array(readFileSync(image.path)));
    results.forEach((r, i) => {
      r && perSetting[i]!.push(r);
    });
    console.log(`jpeg-tuning: ${image.name} done`);
  }
  const photo = (await jpegInputs(INPUT_SIZES[0]!, (line) => console.log(`jpeg-tuning: ${line}`))).baseline;
  const photoResults = await measure(e, new Uint8Array(readFileSync(photo.path)));
  return {
    images: corpus.length,
    rows: SETTINGS.map((s, i) => {
      const steps = perSetting[i]!.map((r) => r.step);
      const interpolated = perSetting[i]!.map((r) => r.interpolated);
      return {
        name: s.name,
        median: median(steps),
        max: Math.max(...steps),
        interpolatedMedian: median(interpolated),
        interpolatedGeomean: geomean(interpolated),
        photo: photoResults[i]!,
      };
    }),
  };
}
