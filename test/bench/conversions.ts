// `npm run bench -- conversions`: every input format to every output format at phone size, measured
// from outside as workerd's peak resident growth (lib/rss.ts), on the first request after the service
// starts (cold) and again after a warm-up (warm): a 12 MP photo as JPEG, PNG, WebP and AVIF to JPEG, PNG
// (width=3000: a full-size photo as PNG is a 20 MB file nobody asks for), WebP and AVIF; a 24 MP photo
// as JPEG, WebP and AVIF at full size to each (as PNG it would be over the upload limit); a 12 MP
// screenshot PNG to each; the 50 MP screenshot PNG with width=2048 to PNG; a 64 × 64 JPEG to each (cold, that output's code loading: the AVIF module's compilation and instantiation);
// and four 12 MP compressions sent at once (200 or 503 overloaded, never 500), to WebP and to AVIF.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, extname } from 'node:path';
import sharp from 'sharp';
import { compress, type CompressOptions, type CompressResult } from './lib/compress-client.ts';
import { syntheticPhoto } from './lib/images.ts';
import { pngInputs } from './lib/png-inputs.ts';
import { mbOf, withRssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';
import { sniff } from '../../src/compress/formats.ts';
import { readHeader } from '../../src/compress/header.ts';
import { plan } from '../../src/compress/memory-plan.ts';
import { keptFormat } from '../../src/compress/request-rules.ts';

type Format = 'jpeg' | 'png' | 'webp' | 'avif';
const ALL_FORMATS: Format[] = ['jpeg', 'png', 'webp', 'avif'];
/** BENCH_CONVERSIONS_OUTPUTS=avif (comma-separated): measure only these outputs (a new column beside earlier runs). */
const FORMATS: Format[] = process.env.BENCH_CONVERSIONS_OUTPUTS
  ? ALL_FORMATS.filter((f) => process.env.BENCH_CONVERSIONS_OUTPUTS!.split(',').includes(f))
  : ALL_FORMATS;
/** BENCH_CONVERSIONS_INPUTS=AVIF,24 MP (comma-separated): only the inputs whose name contains every one of these. */
const INPUT_FILTER = (process.env.BENCH_CONVERSIONS_INPUTS ?? '').split(',').filter(Boolean);
const chosen = (input: { name: string }) => INPUT_FILTER.every((part) => input.name.includes(part));
/**
 * BENCH_CONVERSIONS_FILES=a.avif,b.webp (comma-separated): these files too, as photos, named by their file
 * (test/bench/avifdec-memory.ts makes AVIFs of the synthetic photo at each depth and chroma layout).
 */
const EXTRA_FILES = (process.env.BENCH_CONVERSIONS_FILES ?? '').split(',').filter(Boolean);
/** The width of a photo's PNG output. */
const PHOTO_PNG_WIDTH = 3000;
/** Compressions sent at once in the concurrency case. */
export const AT_ONCE = 4;

export interface ConversionCase {
  label: string;
  input: string;
  output: Format;
  options: CompressOptions;
  /** The memory plan's estimate for the request (src/compress/memory-plan.ts), at the default budget. */
  estimateBytes: number;
  cold: Measured;
  warm: Measured;
}

export interface Measured {
  status: number;
  error?: string;
  ms: number;
  bytes?: number;
  growthBytes?: number;
}

export interface AtOnce {
  output: Format;
  statuses: number[];
  errors: string[];
  ms: number;
  growthBytes?: number;
}

export interface ConversionsBench {
  header: string;
  cases: ConversionCase[];
  atOnce: AtOnce[];
}

const log = (line: string) => console.error(line);

const measured = (r: CompressResult, growth: number | undefined): Measured => ({
  status: r.status,
  error: r.error,
  ms: r.wallMs,
  bytes: r.bytes,
  growthBytes: growth,
});

interface Input {
  name: string;
  file: string;
  bytes: Uint8Array;
  photo: boolean;
}

/**
 * A 64 × 64 JPEG: its cold request to each output is mostly what loading that output's code costs (the
 * AVIF module's compilation and instantiation beside the engine's), its warm request almost nothing.
 */
async function tinyInput(): Promise<Input> {
  const bytes = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3c78b4' } })
    .jpeg({ quality: 90 })
    .toBuffer();
  return { name: '64×64 JPEG (the code loaded cold)', file: 'in.jpg', bytes: new Uint8Array(bytes), photo: false };
}

async function inputs(service: Service): Promise<{ matrix: Input[]; big: Input[]; shot50?: Input }> {
  const photo12 = await syntheticPhoto(12);
  const photo24 = await syntheticPhoto(24);
  const jpeg12 = new Uint8Array(readFileSync(photo12.path));
  const jpeg24 = new Uint8Array(readFileSync(photo24.path));
  const webp12 = new Uint8Array(await sharp(jpeg12).webp({ quality: 90 }).toBuffer());
  const webp24 = new Uint8Array(await sharp(jpeg24).webp({ quality: 90 }).toBuffer());
  // AVIF inputs as sharp writes them by default (4:4:4, its default effort), at a high quality.
  const avif12 = new Uint8Array(await sharp(jpeg12).avif({ quality: 80 }).toBuffer());
  const avif24 = new Uint8Array(await sharp(jpeg24).avif({ quality: 80 }).toBuffer());
  // The PNG inputs take Chromium and the corpus: made only when the filter may choose one (by the words
  // of their names before the size).
  const pngNames = ['12 MP photograph PNG', '12 MP screenshot PNG', '50 MP screenshot PNG'];
  const shots = pngNames.some((name) => chosen({ name })) ? await pngInputs(`${service.base}/docs`, log) : undefined;
  // The synthetic photo's grain makes a PNG over the 10 MB upload limit: the PNG bench's 12 MP photograph instead.
  const [shot12, photoPng, shot50] = shots?.large ?? [];
  const pngInput = (name: string, png: typeof shot12, photo: boolean): Input[] =>
    png
      ? [
          {
            name: `${name} (${png.width}×${png.height})`,
            file: 'in.png',
            bytes: new Uint8Array(readFileSync(png.path)),
            photo,
          },
        ]
      : [];
  const px = `${photo12.width}×${photo12.height}`;
  const px24 = `${photo24.width}×${photo24.height}`;
  return {
    matrix: [
      { name: `12 MP photo JPEG (${px})`, file: 'in.jpg', bytes: jpeg12, photo: true },
      ...pngInput('12 MP photograph PNG', photoPng, true),
      { name: `12 MP photo WebP (${px})`, file: 'in.webp', bytes: webp12, photo: true },
      { name: `12 MP photo AVIF (${px})`, file: 'in.avif', bytes: avif12, photo: true },
      ...pngInput('12 MP screenshot PNG', shot12, false),
      ...EXTRA_FILES.map((path) => ({
        name: basename(path),
        file: `in${extname(path)}`,
        bytes: new Uint8Array(readFileSync(path)),
        photo: true,
      })),
    ],
    big: [
      { name: `24 MP photo JPEG (${px24})`, file: 'in.jpg', bytes: jpeg24, photo: true },
      { name: `24 MP photo WebP (${px24})`, file: 'in.webp', bytes: webp24, photo: true },
      { name: `24 MP photo AVIF (${px24})`, file: 'in.avif', bytes: avif24, photo: true },
    ],
    shot50: pngInput('50 MP screenshot PNG', shot50, false)[0],
  };
}

const BUDGET = 100 * 1048576;

/** What the service plans for this request (the same functions, run here). */
export function estimateOf(bytes: Uint8Array, options: CompressOptions): number {
  const format = sniff(bytes).format!;
  const request = {
    format: options.format ?? keptFormat(format, true),
    quality: options.quality ?? 80,
    width: options.width,
    height: options.height,
  };
  const header = readHeader(format, bytes);
  const planned = plan(format, header, bytes.length, request, BUDGET);
  // As prepare() does: a same-size JPEG whose lossless rewrite would not fit keeps its lossy result.
  return planned.estimate > BUDGET && planned.lossless
    ? plan(format, header, bytes.length, { ...request, allowLossless: false }, BUDGET).estimate
    : planned.estimate;
}

/** One request with the RSS peak around it. */
async function once(service: Service, input: Input, options: CompressOptions): Promise<Measured> {
  const { result, rss } = await withRssPeak(
    service.pid,
    () => compress(service.base, service.demoKeys.image_pro!, input.bytes, input.file, options),
    true,
  );
  return measured(result, rss.maxGrowthBytes);
}

export async function benchConversions(start: () => Promise<Service>): Promise<ConversionsBench> {
  const t0 = performance.now();
  let service = await start();
  const cases: ConversionCase[] = [];
  const atOnce: AtOnce[] = [];
  try {
    const { matrix, big, shot50 } = await inputs(service);
    const tiny = await tinyInput();
    const run: { input: Input; output: Format; options: CompressOptions }[] = [
      ...[tiny, ...matrix, ...big].filter(chosen).flatMap((input) =>
        FORMATS.map((output) => ({
          input,
          output,
          options: {
            format: output,
            quality: 80,
            ...(output === 'png' && input.photo ? { width: PHOTO_PNG_WIDTH } : {}),
          } as CompressOptions,
        })),
      ),
      ...(FORMATS.includes('png') && shot50 && chosen(shot50)
        ? [{ input: shot50, output: 'png' as const, options: { format: 'png', width: 2048 } as CompressOptions }]
        : []),
    ];
    for (const c of run) {
      // Cold: the first request of a fresh service; warm: the same request once more.
      await service.stop();
      service = await start();
      const cold = await once(service, c.input, c.options);
      const warm = await once(service, c.input, c.options);
      const label = `${c.input.name} → ${c.output}${c.options.width ? ` width=${c.options.width}` : ''}`;
      log(
        `conversions: ${label}: cold ${cold.status} ${cold.ms.toFixed(0)} ms +${mbOf(cold.growthBytes)} MB; warm ${warm.status} ${warm.ms.toFixed(0)} ms +${mbOf(warm.growthBytes)} MB${cold.error ? ` (${cold.error})` : ''}`,
      );
      cases.push({
        label,
        input: c.input.name,
        output: c.output,
        options: c.options,
        estimateBytes: estimateOf(c.input.bytes, c.options),
        cold,
        warm,
      });
    }
    // Four at once, after a warm-up: 200 or 503 overloaded each, the growth of the whole burst.
    const photo = matrix[0]!;
    // BENCH_CONVERSIONS_AT_ONCE=0: not (a filtered run that measures one input).
    const burstOutputs = process.env.BENCH_CONVERSIONS_AT_ONCE === '0' ? [] : (['webp', 'avif'] as const);
    for (const output of burstOutputs.filter((f) => FORMATS.includes(f))) {
      await once(service, photo, { format: output, quality: 80 });
      const started = performance.now();
      const burst = await withRssPeak(
        service.pid,
        () =>
          Promise.all(
            Array.from({ length: AT_ONCE }, () =>
              compress(service.base, service.demoKeys.image_pro!, photo.bytes, photo.file, {
                format: output,
                quality: 80,
              }),
            ),
          ),
        true,
      );
      const burstResult: AtOnce = {
        output,
        statuses: burst.result.map((r) => r.status),
        errors: burst.result.flatMap((r) => (r.error ? [r.error] : [])),
        ms: performance.now() - started,
        growthBytes: burst.rss.maxGrowthBytes,
      };
      atOnce.push(burstResult);
      log(
        `conversions: ${AT_ONCE} at once → ${output}: ${burstResult.statuses.join(' ')} in ${burstResult.ms.toFixed(0)} ms, +${mbOf(burstResult.growthBytes)} MB`,
      );
    }
  } finally {
    await service.stop();
  }
  const header =
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. ` +
    `Shrinkray under wrangler dev (MEMORY_BUDGET_MB 100, MAX_INPUT_PIXELS 100,000,000), pro key, quality 80, one request at a time. ` +
    `Peak RSS growth: VmHWM − VmRSS of the workerd process that grew most, /proc clear_refs=5 before each request, after a forced GC; ` +
    `cold = the first request after the service started, warm = the same request again; 1 MB = 1,048,576 bytes. Photos: lib/images.ts's ` +
    `synthetic photo (JPEG q90 by sharp; the WebP q90 and AVIF q80 made from it by sharp); the PNG photograph and the screenshots: lib/png-inputs.ts (as the PNG bench). Bench time ${((performance.now() - t0) / 1000).toFixed(0)} s.`;
  return { header, cases, atOnce };
}

export function conversionsReport(result: ConversionsBench): string {
  const cell = (m: Measured) =>
    m.status === 200
      ? `200, ${(m.ms / 1000).toFixed(2)} s, +${mbOf(m.growthBytes)} MB`
      : `**${m.status}** ${m.error ?? ''}`;
  return [
    result.header,
    '',
    '| input → output | estimate | cold: status, time, peak growth | warm |',
    '|---|---:|---|---|',
    ...result.cases.map((c) => `| ${c.label} | ${mbOf(c.estimateBytes)} MB | ${cell(c.cold)} | ${cell(c.warm)} |`),
    '',
    ...result.atOnce.map(
      (a) =>
        `${AT_ONCE} × 12 MP JPEG → ${a.output} sent at once: statuses ${a.statuses.join(', ')} in ${(a.ms / 1000).toFixed(2)} s, peak growth +${mbOf(a.growthBytes)} MB` +
        (a.errors.length ? ` (${a.errors.join('; ')})` : ''),
    ),
  ].join('\n');
}
