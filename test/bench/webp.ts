// WebP bench: the corpus's WebPs (up to 16.8 MP) through POST /api/v1/compress and through sharp in
// this process, side by side in one run. Per case (→ WebP q80, → JPEG q80, → WebP width=2048): status,
// output, wall time, and the peak resident-set growth of the service's workerd processes read by the
// kernel (lib/rss.ts), not reported by the Worker. Then WebP q80 bytes at equal SSIM against sharp's
// webp({ quality: 80 }), and time ratios. One request at a time; a failed case is a row, never the end.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import sharp from 'sharp';
import { alive, compress, type CompressOptions, type CompressResult } from './lib/compress-client.ts';
import { loadCorpus } from './lib/corpus.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { equalSsim, sharpMozjpeg, type EqualSsim, type Probe, type Send } from './lib/jpeg-quality.ts';
import { gcWorker, mbOf, residentBytes, withRssPeak, type RssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';
import { checkSsim, decodeRgb, ssim } from './lib/ssim.ts';

/** Past this many seconds, no further quality search is started (2 shared cores). */
export const WEBP_BUDGET_S = Number(process.env.BENCH_WEBP_BUDGET_S ?? 900);
/** The memory target for a 16.8 MP WebP to WebP or JPEG: peak growth of the Worker's process. */
export const WEBP_PEAK_TARGET_MB = 100;
const SMALL_WIDTH = 2048;
const log = (line: string) => console.error(line);

export interface WebpCase {
  image: string;
  megapixels: number;
  inputBytes: number;
  label: string;
  status: number;
  error?: string;
  bytes?: number;
  width?: number;
  height?: number;
  wallMs: number;
  serverMs?: number;
  rss: RssPeak;
  sharpMs: number;
  sharpBytes: number;
}

export interface WebpQuality {
  image: string;
  megapixels: number;
  sharp: { bytes: number; ssim: number };
  q80?: Probe;
  search: EqualSsim;
}

export interface WebpBench {
  header: string;
  cases: WebpCase[];
  quality: WebpQuality[];
  notes: string[];
  residentIdle: ReturnType<typeof residentBytes>;
}

/** sharp's equivalent of a case, timed: decode, upright, Lanczos3 to `width`, encode. */
async function sharpCase(
  input: Uint8Array,
  format: 'webp' | 'jpeg',
  width?: number,
): Promise<{ ms: number; bytes: number; output: Buffer }> {
  if (format === 'jpeg') return sharpMozjpeg(input, width);
  const t0 = performance.now();
  let img = sharp(input, { limitInputPixels: false }).rotate();
  if (width !== undefined) img = img.resize({ width, kernel: 'lanczos3', withoutEnlargement: true });
  const output = await img.webp({ quality: 80 }).toBuffer();
  return { ms: performance.now() - t0, bytes: output.byteLength, output };
}

const brief = (r: CompressResult) =>
  r.status === 200 ? `${r.bytes} B ${r.width}×${r.height}` : `${r.status || 'no answer'} ${r.error ?? ''}`;

export async function benchWebp(start: () => Promise<Service>): Promise<WebpBench> {
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  await checkSsim();
  const corpus = await loadCorpus(1000);
  const images = corpus.images.filter((i) => i.type === 'webp').sort((a, b) => b.megapixels - a.megapixels);
  const notes: string[] = [];
  const result: WebpBench = { header: '', cases: [], quality: [], notes, residentIdle: [] };
  let service = await start();
  const send = async (input: Uint8Array, name: string, options: CompressOptions, measure: boolean) => {
    const key = service.demoKeys.image_pro!;
    const request = () => compress(service.base, key, input, name, options);
    const out = measure
      ? await withRssPeak(service.pid, request)
      : { result: await request(), rss: { processes: [] } as RssPeak };
    if (out.result.status === 0 && !(await alive(service.base))) {
      notes.push(`the service died on ${name} ${JSON.stringify(options)} (${out.result.error}); restarted`);
      await service.stop();
      service = await start();
    }
    return out;
  };
  try {
    if (service.pid === undefined) notes.push('the service has no pid: no memory measured');
    // Warm-up: instantiation and JIT belong to no case.
    const smallest = images.at(-1);
    if (smallest) await send(readFileSync(smallest.path), 'warm.webp', { format: 'webp', quality: 80 }, false);
    if (service.pid !== undefined) {
      await gcWorker(service.pid);
      result.residentIdle = residentBytes(service.pid);
    }
    for (const image of images) {
      const input = readFileSync(image.path);
      const file = image.name.split('/').at(-1)!;
      for (const [label, options] of [
        ['→ WebP q80', { format: 'webp', quality: 80 }],
        ['→ JPEG q80', { format: 'jpeg', quality: 80 }],
        [`→ WebP q80 width=${SMALL_WIDTH}`, { format: 'webp', quality: 80, width: SMALL_WIDTH }],
      ] as [string, CompressOptions][]) {
        const { result: r, rss } = await send(input, file, options, true);
        const s = await sharpCase(input, options.format as 'webp' | 'jpeg', options.width);
        result.cases.push({
          image: image.name,
          megapixels: image.megapixels,
          inputBytes: image.bytes,
          label,
          status: r.status,
          error: r.error,
          bytes: r.bytes,
          width: r.width,
          height: r.height,
          wallMs: r.wallMs,
          serverMs: r.timing.total,
          rss,
          sharpMs: s.ms,
          sharpBytes: s.bytes,
        });
        log(
          `webp: ${image.name} ${label}: ${brief(r)}, ${r.wallMs.toFixed(0)} ms (sharp ${s.ms.toFixed(0)} ms), RSS +${mbOf(rss.maxGrowthBytes)} MB`,
        );
      }
    }
    for (const [i, image] of images.entries()) {
      if (elapsed() > WEBP_BUDGET_S) {
        notes.push(`time budget (${WEBP_BUDGET_S} s) spent: ${images.length - i} quality searches left out`);
        break;
      }
      const input = readFileSync(image.path);
      const file = image.name.split('/').at(-1)!;
      const reference = await decodeRgb(input);
      const s = await sharpCase(input, 'webp');
      const sharpSsim = ssim(reference, await decodeRgb(s.output, reference));
      const post: Send = async (options) => (await send(input, file, options, false)).result;
      const q80r = await post({ format: 'webp', quality: 80 });
      const first: Probe = {
        quality: 80,
        status: q80r.status,
        error: q80r.error,
        bytes: q80r.bytes,
        wallMs: q80r.wallMs,
      };
      if (q80r.output) {
        first.original = Buffer.from(q80r.output).equals(input);
        first.ssim = ssim(reference, await decodeRgb(q80r.output, reference));
      }
      const search = await equalSsim(post, input, reference, sharpSsim, first, 'webp');
      result.quality.push({
        image: image.name,
        megapixels: image.megapixels,
        sharp: { bytes: s.bytes, ssim: sharpSsim },
        q80: first,
        search,
      });
      const m = search.match;
      log(
        `webp: ${image.name}: sharp ${s.bytes} B SSIM ${sharpSsim.toFixed(4)}; q80 ${first.bytes} B SSIM ${first.ssim?.toFixed(4)}; ` +
          (m
            ? `equal SSIM at q${m.quality}: ${m.bytes} B (${(m.bytes! / s.bytes).toFixed(3)}×)`
            : `no match: ${search.stopped}`),
      );
    }
  } finally {
    await service.stop();
  }
  result.header =
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}, libwebp ${sharp.versions.webp ?? '?'}, 1 thread, no cache), ${new Date().toISOString().slice(0, 10)}. ` +
    `Shrinkray under wrangler dev with MAX_INPUT_PIXELS 100,000,000, one request at a time, pro key. Inputs: the ${images.length} WebPs of ${corpus.selection}. ` +
    `Time: client wall ms vs sharp decode + rotate + resize + encode in-process. Peak RSS growth: VmHWM − VmRSS of the workerd that grew most, from /proc, ` +
    `clear_refs=5 and the baseline just before the request after a forced GC of the isolate; 1 MB = 1,048,576 bytes. ` +
    `SSIM: lib/ssim.ts at full resolution against the input's pixels; equal SSIM = the lowest quality (50–95) whose SSIM ≥ sharp q80's. Bench time ${elapsed().toFixed(0)} s.`;
  return result;
}

const median = (values: number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export function webpReport(r: WebpBench): string {
  const cases = [
    '| image | MP | case | status | bytes | sharp bytes | ms | sharp ms | time ÷ sharp | peak RSS growth MB |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...r.cases.map(
      (c) =>
        `| ${c.image.split('/').at(-1)} | ${c.megapixels.toFixed(1)} | ${c.label} | ${c.status} | ${c.bytes ?? '–'} | ${c.sharpBytes} | ${c.wallMs.toFixed(0)} | ${c.sharpMs.toFixed(0)} | ${(c.wallMs / c.sharpMs).toFixed(2)} | ${mbOf(c.rss.maxGrowthBytes)} |`,
    ),
  ];
  const ratios = r.quality.filter((q) => q.search.match?.bytes).map((q) => q.search.match!.bytes! / q.sharp.bytes);
  const quality = [
    '| image | MP | sharp q80 bytes | sharp SSIM | ours q80 bytes | ours q80 SSIM | equal-SSIM quality | bytes there | ÷ sharp |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.quality.map((q) => {
      const m = q.search.match;
      return `| ${q.image.split('/').at(-1)} | ${q.megapixels.toFixed(1)} | ${q.sharp.bytes} | ${q.sharp.ssim.toFixed(4)} | ${q.q80?.bytes ?? '–'} | ${q.q80?.ssim?.toFixed(4) ?? '–'} | ${m ? `q${m.quality}` : (q.search.stopped ?? '–')} | ${m?.bytes ?? '–'} | ${m ? (m.bytes! / q.sharp.bytes).toFixed(3) : '–'} |`;
    }),
  ];
  const big = r.cases.filter((c) => c.megapixels >= 16 && !c.label.includes('width'));
  const bigMax = Math.max(...big.map((c) => c.rss.maxGrowthBytes ?? Infinity));
  const summary = [
    `WebP q80 bytes at equal SSIM ÷ sharp webp({ quality: 80 }): median ${median(ratios).toFixed(3)} over ${ratios.length} images (target ≤ 1.00).`,
    `16.8 MP → WebP and → JPEG: ${big.every((c) => c.status === 200) ? 'all 200' : 'NOT all 200'}, largest peak RSS growth ${mbOf(bigMax)} MB (target ≤ ${WEBP_PEAK_TARGET_MB}).`,
    `Median time ÷ sharp: → WebP ${median(r.cases.filter((c) => c.label === '→ WebP q80').map((c) => c.wallMs / c.sharpMs)).toFixed(2)}, → JPEG ${median(r.cases.filter((c) => c.label === '→ JPEG q80').map((c) => c.wallMs / c.sharpMs)).toFixed(2)}.`,
  ];
  return [r.header, '', ...summary, '', ...cases, '', ...quality, '', ...r.notes.map((n) => `- ${n}`)].join('\n');
}
