// PNG bench: the PNG engine through POST /api/v1/compress against sharp (libvips + libspng/zlib) and
// Debian's pngquant, side by side in one run. Part 1, large inputs one at a time: a 12 MP screenshot
// and a 12 MP photo to lossless PNG, a 50 MP screenshot with width=2048, the 12 MP screenshot to a
// palette; status, bytes, wall time against sharp's, and the peak resident-set growth of the service's
// workerd processes read from /proc (lib/rss.ts). Part 2, bytes: over the corpus's PNGs and the
// screenshots the bench renders, lossless bytes against sharp png({ compressionLevel: 9 }), and palette
// bytes at equal-or-better SSIM against `pngquant --quality=65-80` and sharp png({ palette: true }).
// A translucent image (alpha between 0 and 255 somewhere) is judged composited on white and on black,
// by the lower of the two SSIMs: on white alone an alpha error that a colour error cancels would not show.
// BENCH_PNG_ONLY=translucent runs part 2 alone, on every translucent corpus PNG.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { alive, compress, type CompressOptions, type CompressResult } from './lib/compress-client.ts';
import { describeCorpus, loadCorpus } from './lib/corpus.ts';
import { type MeasuredCompression, measured } from './lib/memory.ts';
import { pngInputs, type PngInput } from './lib/png-inputs.ts';
import { gcWorker, withRssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';
import { checkSsim, decodeRgb, ssim } from './lib/ssim.ts';

/** Corpus PNGs in part 2 (BENCH_CORPUS_MAX caps the corpus before the PNGs are picked from it). */
export const PNG_CORPUS_MAX = Number(process.env.BENCH_PNG_CORPUS_MAX ?? 8);
/** Our palette qualities tried, lowest first, until the SSIM reaches the reference's. */
export const QUALITY_LADDER = [65, 80, 90, 95, 99, 100];
const log = (line: string) => console.error(line);

export interface LargeCase extends MeasuredCompression {
  input: PngInput;
  options: CompressOptions & { palette?: boolean };
  sharp: { ms: number; bytes: number };
}

export interface Competitor {
  bytes: number;
  /** The lower of `white` and `black` for a translucent image, else `white`. */
  ssim: number;
  white?: number;
  black?: number;
  ms: number;
  /**
   * Our smallest palette=true output whose SSIM is at least this one's; when none is, our lossless
   * output (quality 'lossless', SSIM 1): what a caller wanting that SSIM would have to take.
   */
  ours?: { quality: number | 'lossless'; bytes: number; ssim: number; white?: number; black?: number; ms: number };
  error?: string;
}

export interface ImageResult {
  name: string;
  source: 'screenshot' | 'corpus';
  width: number;
  height: number;
  inputBytes: number;
  translucent: boolean;
  lossless: { bytes?: number; ms: number; sharpBytes: number; sharpMs: number; error?: string };
  pngquant: Competitor;
  sharpPalette: Competitor;
  probes: {
    quality: number;
    bytes?: number;
    ssim?: number;
    white?: number;
    black?: number;
    ms: number;
    measured?: number;
    error?: string;
  }[];
}

export interface PngBench {
  header: string;
  large: LargeCase[];
  images: ImageResult[];
  notes: string[];
}

const timedSharp = async (make: () => Promise<Buffer>) => {
  const t = performance.now();
  const out = await make();
  return { out, ms: performance.now() - t };
};

function pngquant(input: Uint8Array): { bytes?: Buffer; ms: number; error?: string } {
  const dir = mkdtempSync(join(tmpdir(), 'png-bench-'));
  try {
    writeFileSync(join(dir, 'in.png'), input);
    const t = performance.now();
    try {
      execFileSync('pngquant', ['--quality=65-80', '--output', join(dir, 'out.png'), '--', join(dir, 'in.png')], {
        stdio: 'pipe',
      });
    } catch (err) {
      return {
        ms: performance.now() - t,
        error: `pngquant exit ${(err as { status?: number }).status} (99: quality 65 not reachable)`,
      };
    }
    const ms = performance.now() - t;
    return { bytes: readFileSync(join(dir, 'out.png')), ms };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function quality(
  service: Service,
  input: PngInput | { name: string; path: string },
  source: ImageResult['source'],
): Promise<ImageResult> {
  const bytes = readFileSync(input.path);
  const key = service.demoKeys.image_pro!;
  const file = 'in.png';
  const send = (options: Record<string, string | number>) =>
    compress(service.base, key, bytes, file, options as CompressOptions);
  const reference = await decodeRgb(bytes);
  const translucent = await isTranslucent(bytes);
  const onBlack = translucent ? await decodeRgb(bytes, undefined, '#000000') : undefined;
  const score = async (out: Uint8Array): Promise<{ ssim: number; white: number; black?: number }> => {
    const white = ssim(reference, await decodeRgb(out, reference));
    if (!onBlack) return { ssim: white, white };
    const black = ssim(onBlack, await decodeRgb(out, onBlack, '#000000'));
    return { ssim: Math.min(white, black), white, black };
  };

  const lossless = await send({ format: 'png' });
  const sharpLossless = await timedSharp(() =>
    sharp(bytes, { limitInputPixels: false }).png({ compressionLevel: 9 }).toBuffer(),
  );
  const result: ImageResult = {
    name: input.name,
    source,
    width: reference.width,
    height: reference.height,
    inputBytes: bytes.byteLength,
    translucent,
    lossless: {
      bytes: lossless.bytes,
      ms: lossless.wallMs,
      sharpBytes: sharpLossless.out.byteLength,
      sharpMs: sharpLossless.ms,
      error: lossless.error,
    },
    pngquant: { bytes: 0, ssim: 0, ms: 0 },
    sharpPalette: { bytes: 0, ssim: 0, ms: 0 },
    probes: [],
  };
  const quant = pngquant(bytes);
  result.pngquant = quant.bytes
    ? { bytes: quant.bytes.byteLength, ...(await score(quant.bytes)), ms: quant.ms }
    : { bytes: 0, ssim: 0, ms: quant.ms, error: quant.error };
  const sp = await timedSharp(() =>
    sharp(bytes, { limitInputPixels: false }).png({ palette: true, compressionLevel: 9 }).toBuffer(),
  );
  result.sharpPalette = { bytes: sp.out.byteLength, ...(await score(sp.out)), ms: sp.ms };

  const targets = [result.pngquant, result.sharpPalette].filter((c) => !c.error);
  const probe = async (q: number) => {
    const r: CompressResult = await send({ format: 'png', palette: 'true', quality: q });
    const entry = {
      quality: q,
      bytes: r.bytes,
      ...(r.output ? await score(r.output) : {}),
      ms: r.wallMs,
      measured: r.quality,
      error: r.error,
    };
    result.probes.push(entry);
    return entry;
  };
  for (const q of QUALITY_LADDER) {
    const p = await probe(q);
    for (const t of targets) {
      if (!t.ours && p.ssim !== undefined && p.bytes !== undefined && p.ssim >= t.ssim)
        t.ours = { quality: q, bytes: p.bytes, ssim: p.ssim, white: p.white, black: p.black, ms: p.ms };
    }
    // Quality 80 (the default) is always probed, for the translucent table.
    if (q >= 80 && targets.every((t) => t.ours)) break;
  }
  for (const t of targets)
    if (!t.ours && lossless.bytes !== undefined)
      t.ours = { quality: 'lossless', bytes: lossless.bytes, ssim: 1, ms: lossless.wallMs };
  const ratio = (c: Competitor) => (c.ours ? (c.ours.bytes / c.bytes).toFixed(3) : (c.error ?? 'no match'));
  log(
    `png: ${input.name}: lossless ${lossless.bytes} B vs sharp ${sharpLossless.out.byteLength} B; ` +
      `pngquant ${result.pngquant.bytes} B SSIM ${result.pngquant.ssim.toFixed(4)} → ours ${ratio(result.pngquant)}; ` +
      `sharp palette ${result.sharpPalette.bytes} B SSIM ${result.sharpPalette.ssim.toFixed(4)} → ours ${ratio(result.sharpPalette)}`,
  );
  return result;
}

/** Whether some pixel is neither opaque nor fully transparent. */
async function isTranslucent(bytes: Uint8Array): Promise<boolean> {
  const image = sharp(bytes, { limitInputPixels: false });
  if (!(await image.metadata()).hasAlpha) return false;
  const alpha = await sharp(bytes, { limitInputPixels: false }).extractChannel('alpha').raw().toBuffer();
  return alpha.some((a) => a > 0 && a < 255);
}

async function large(
  service: Service,
  label: string,
  input: PngInput,
  options: LargeCase['options'],
): Promise<LargeCase> {
  const bytes = readFileSync(input.path);
  const key = service.demoKeys.image_pro!;
  const { result: r, rss } = await withRssPeak(
    service.pid,
    () => compress(service.base, key, bytes, 'in.png', options as CompressOptions),
    true,
  );
  const s = await timedSharp(() => {
    let img = sharp(bytes, { limitInputPixels: false });
    if (options.width) img = img.resize({ width: options.width, kernel: 'lanczos3' });
    return img.png(options.palette ? { palette: true, compressionLevel: 9 } : { compressionLevel: 9 }).toBuffer();
  });
  log(
    `png: ${label}: ${r.status} ${r.bytes ?? r.error} B in ${r.wallMs.toFixed(0)} ms (sharp ${s.ms.toFixed(0)} ms, ${s.out.byteLength} B), RSS +${((rss.maxGrowthBytes ?? NaN) / 1048576).toFixed(1)} MB`,
  );
  return {
    label,
    input,
    options,
    ...measured(r, rss),
    sharp: { ms: s.ms, bytes: s.out.byteLength },
  };
}

async function filterAsync<T>(items: T[], keep: (item: T) => Promise<boolean>): Promise<T[]> {
  const kept: T[] = [];
  for (const item of items) if (await keep(item)) kept.push(item);
  return kept;
}

export async function benchPng(start: () => Promise<Service>): Promise<PngBench> {
  const t0 = performance.now();
  await checkSsim();
  const notes: string[] = [];
  let service = await start();
  const result: PngBench = { header: '', large: [], images: [], notes };
  try {
    const corpus = await loadCorpus(Number(process.env.BENCH_CORPUS_MAX ?? 1000));
    const corpusPngs = corpus.images.filter((i) => i.type === 'png');
    const onlyTranslucent = process.env.BENCH_PNG_ONLY === 'translucent';
    const picked = onlyTranslucent
      ? await filterAsync(corpusPngs, async (c) => isTranslucent(readFileSync(c.path)))
      : corpusPngs
          .filter((_, i) => i % Math.max(1, Math.ceil(corpusPngs.length / PNG_CORPUS_MAX)) === 0)
          .slice(0, PNG_CORPUS_MAX);
    if (onlyTranslucent) {
      for (const c of picked) result.images.push(await quality(service, { name: c.name, path: c.path }, 'corpus'));
      result.header = `Translucent corpus PNGs only (BENCH_PNG_ONLY=translucent), ${new Date().toISOString().slice(0, 10)}; SSIM on white and on black.`;
      return result;
    }
    const inputs = await pngInputs(`${service.base}/docs`, log);
    // Warm-up: instantiation and JIT belong to no case.
    await compress(service.base, service.demoKeys.image_pro!, readFileSync(inputs.screenshots[0]!.path), 'in.png', {
      format: 'png',
    });
    if (service.pid !== undefined) {
      const gc = await gcWorker(service.pid);
      if (gc.gcError) notes.push(`forced GC unavailable: ${gc.gcError}`);
    }
    const [shot12, photo12, shot50] = inputs.large as [PngInput, PngInput, PngInput];
    const cases: [string, PngInput, LargeCase['options']][] = [
      ['12 MP screenshot → PNG', shot12, { format: 'png' }],
      ['12 MP photo → PNG', photo12, { format: 'png' }],
      ['50 MP screenshot → PNG width=2048', shot50, { format: 'png', width: 2048 }],
      ['12 MP screenshot → palette PNG', shot12, { format: 'png', palette: true }],
      ['12 MP photo → JPEG q80', photo12, { format: 'jpeg', quality: 80 }],
    ];
    for (const [label, input, options] of cases) {
      const c = await large(service, label, input, options);
      result.large.push(c);
      if (c.status === 0 && !(await alive(service.base))) {
        notes.push(`the service died on ${label}; restarted`);
        await service.stop();
        service = await start();
      }
    }
    for (const s of inputs.screenshots) result.images.push(await quality(service, s, 'screenshot'));
    for (const c of picked) {
      try {
        result.images.push(await quality(service, { name: c.name, path: c.path }, 'corpus'));
      } catch (err) {
        notes.push(`${c.name}: ${(err as Error).message}`);
      }
    }
    const photoNote = photo12.note ? ` 12 MP photo: ${photo12.note}.` : '';
    result.header =
      `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}), ` +
      `pngquant ${execFileSync('pngquant', ['--version']).toString().trim()} (Debian), ${new Date().toISOString().slice(0, 10)}. ` +
      `Shrinkray under wrangler dev with MAX_INPUT_PIXELS 100,000,000, one request at a time, pro key. ` +
      `Peak RSS growth: VmHWM − VmRSS of the workerd process that grew most, /proc clear_refs=5 before each request, after a forced GC of the isolate; 1 MB = 1,048,576 bytes.${photoNote} ` +
      `Screenshots rendered by Chromium, re-written by sharp at zlib level 9. Corpus: ${picked.length} PNGs of ${describeCorpus(corpus.images)}. ` +
      `SSIM: lib/ssim.ts on RGB after flattening onto white, and for translucent images the lower of that and onto black. Bench time ${((performance.now() - t0) / 1000).toFixed(0)} s.`;
  } finally {
    await service.stop();
  }
  return result;
}
