// WebAssembly memory of the codecs, read from the operator's /internal/codecs: a Worker isolate has
// 128 MB for everything, and a codec's linear memory only grows, so the peak per request decides the
// largest image the service can take, and what stays live after a mix decides what the next one has.
import { readFileSync } from 'node:fs';
import type { CorpusImage } from './corpus.ts';
import { alive, codecs, compress, type CompressOptions, type CompressResult } from './compress-client.ts';
import { syntheticPhoto } from './images.ts';
import type { Service } from './server.ts';
import type { RssPeak } from './rss.ts';

export const CURVE_MEGAPIXELS = [1, 2, 3, 4, 6, 8, 12, 16, 24];
/** WebP and PNG at a few sizes only: a PNG of a noisy 8 MP photo is a long oxipng run. */
const CURVE_EXTRA: { format: 'webp' | 'png'; megapixels: number[] }[] = [
  { format: 'webp', megapixels: [1, 2, 3, 4, 8, 16] },
  { format: 'png', megapixels: [1, 2, 3, 4, 8] },
];
/** Resize first: the decoded input is the peak, not the encoder's working set. */
const CURVE_RESIZED = { width: 1280, megapixels: [8, 24] };
export const MIXED_REQUESTS = 50;

/** One compression a bench sent and timed from outside, with workerd's resident peak during it. */
export interface MeasuredCompression {
  label: string;
  status: number;
  error?: string;
  bytes?: number;
  width?: number;
  height?: number;
  wallMs: number;
  serverMs?: number;
  rss: RssPeak;
}

/** A compression's answer and resident peak as the fields of a MeasuredCompression. */
export const measured = (r: CompressResult, rss: RssPeak): Omit<MeasuredCompression, 'label'> => ({
  status: r.status,
  error: r.error,
  bytes: r.bytes,
  width: r.width,
  height: r.height,
  wallMs: r.wallMs,
  serverMs: r.timing.total,
  rss,
});

export interface MemoryPoint {
  case: string;
  megapixels: number;
  width: number;
  height: number;
  status: number;
  error?: string;
  /** Peak of the summed live codec memories during the request (reset just before). */
  peakBytes?: number;
  /** Codec memory still held after the request (instances under the retain threshold stay). */
  liveBytes?: number;
  serverMs?: number;
  wallMs: number;
  outputBytes?: number;
}

const opts = (o: CompressOptions) =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

interface Measured {
  result: CompressResult;
  peakBytes?: number;
  liveBytes?: number;
  crashed: boolean;
}

/** reset → one compression → report. A failed request is recorded; a dead server is restarted. */
async function measure(
  service: Service,
  token: string,
  key: string,
  input: Uint8Array,
  name: string,
  options: CompressOptions,
): Promise<Measured> {
  await codecs(service.base, token, true);
  const result = await compress(service.base, key, input, name, options);
  if (result.status === 0 && !(await alive(service.base))) return { result, crashed: true };
  const report = await codecs(service.base, token).catch(() => undefined);
  return { result, peakBytes: report?.peak_bytes, liveBytes: report?.live_bytes, crashed: false };
}

/** One measured compression as a point of the report. */
const memoryPoint = (
  label: string,
  image: { megapixels: number; width: number; height: number },
  m: Measured,
): MemoryPoint => ({
  case: label,
  megapixels: image.megapixels,
  width: image.width,
  height: image.height,
  status: m.result.status,
  error: m.result.error,
  peakBytes: m.peakBytes,
  liveBytes: m.liveBytes,
  serverMs: m.result.timing.total,
  wallMs: m.result.wallMs,
  outputBytes: m.result.bytes,
});

/**
 * The curve megapixels → peak WASM bytes on synthetic photos, against a service started by `start`
 * (with MAX_INPUT_PIXELS raised, so sizes past the default limit are measured, not refused).
 */
export async function memoryCurve(
  start: () => Promise<Service>,
  token: () => string,
  log: (line: string) => void,
): Promise<MemoryPoint[]> {
  const cases: { megapixels: number; options: CompressOptions }[] = [
    ...CURVE_MEGAPIXELS.map((megapixels) => ({ megapixels, options: { format: 'jpeg' as const, quality: 80 } })),
    ...CURVE_EXTRA.flatMap((e) =>
      e.megapixels.map((megapixels) => ({ megapixels, options: { format: e.format, quality: 80 } })),
    ),
    ...CURVE_RESIZED.megapixels.map((megapixels) => ({
      megapixels,
      options: { format: 'jpeg' as const, quality: 80, width: CURVE_RESIZED.width },
    })),
  ];
  const points: MemoryPoint[] = [];
  let service = await start();
  try {
    const key = service.demoKeys.image_pro!;
    for (const c of cases) {
      const photo = await syntheticPhoto(c.megapixels);
      const label = `${(c.megapixels + ' MP').padEnd(6)} ${opts(c.options)}`;
      const m = await measure(service, token(), key, readFileSync(photo.path), 'photo.jpg', c.options);
      const point = memoryPoint(opts(c.options), { ...photo, megapixels: (photo.width * photo.height) / 1e6 }, m);
      if (m.crashed) {
        point.error = `server died: ${m.result.error}`;
        log(`  ${label}: the server died; restarting it`);
        await service.stop();
        service = await start();
      }
      points.push(point);
      log(`  ${label}: ${point.status === 200 ? `peak ${mb(point.peakBytes)} MB` : `failed (${point.error})`}`);
    }
  } finally {
    await service.stop();
  }
  return points;
}

export interface LargestResult {
  image: string;
  megapixels: number;
  points: MemoryPoint[];
}

/**
 * Peak WASM memory for the corpus image with the most pixels, as JPEG and as WebP. When the service
 * refuses it (image_too_large), the refusal is recorded and the next smaller image is measured too.
 */
export async function largestImage(service: Service, token: string, images: CorpusImage[]): Promise<LargestResult> {
  const bySize = [...images].sort((a, b) => b.megapixels - a.megapixels || b.bytes - a.bytes);
  const points: MemoryPoint[] = [];
  for (const image of bySize) {
    if (points.some((p) => p.megapixels === image.megapixels)) continue; // refused already at this size
    const input = readFileSync(image.path);
    for (const format of ['jpeg', 'webp'] as const) {
      const m = await measure(service, token, service.demoKeys.image_pro!, input, image.name, { format, quality: 80 });
      points.push(memoryPoint(`${image.name} format=${format} quality=80`, image, m));
      if (m.crashed || m.result.error?.startsWith('image_too_large')) break;
    }
    if (!points.at(-1)!.error?.startsWith('image_too_large'))
      return { image: image.name, megapixels: image.megapixels, points };
  }
  const first = bySize[0]!;
  return { image: first.name, megapixels: first.megapixels, points };
}

export interface MixedResult {
  requests: number;
  statuses: Record<number, number>;
  errors: string[];
  liveBytes?: number;
  peakBytes?: number;
  codecs?: { name: string; live: boolean; memory_bytes: number; instantiations: number }[];
  mix: string;
}

/**
 * MIXED_REQUESTS corpus compressions in one isolate after a reset, then what it holds. Formats take
 * turns; every fourth request is resized to 1024 wide, and so is a PNG output of a large image (a
 * lossless 16 MP PNG is minutes of oxipng and measures nothing the others don't).
 */
export async function mixedRequests(
  service: Service,
  token: string,
  images: CorpusImage[],
  log: (line: string) => void,
): Promise<MixedResult> {
  if (images.length === 0) throw new Error('no corpus image to mix');
  await codecs(service.base, token, true);
  const statuses: Record<number, number> = {};
  const errors: string[] = [];
  const formats = ['jpeg', 'webp', 'png'] as const;
  for (let i = 0; i < MIXED_REQUESTS; i++) {
    const image = images[(i * 7) % images.length]!;
    const format = formats[i % 3]!;
    const resized = i % 4 === 0 || (format === 'png' && image.megapixels > 4);
    const options: CompressOptions = { format, quality: 80, ...(resized ? { width: 1024 } : {}) };
    const r = await compress(service.base, service.demoKeys.image_pro!, readFileSync(image.path), image.name, options);
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.error) errors.push(`${image.name} ${opts(options)}: ${r.error}`);
    if (r.status === 0 && !(await alive(service.base))) {
      errors.push('the server died; mix stopped');
      break;
    }
    if ((i + 1) % 10 === 0) log(`  mixed: ${i + 1}/${MIXED_REQUESTS}`);
  }
  const report = await codecs(service.base, token).catch(() => undefined);
  return {
    requests: Object.values(statuses).reduce((a, b) => a + b, 0),
    statuses,
    errors,
    liveBytes: report?.live_bytes,
    peakBytes: report?.peak_bytes,
    codecs: report?.codecs,
    mix: `formats jpeg, webp, png in turn; image (7·i mod ${images.length}) of the corpus images the service accepted; width=1024 on every 4th and on PNG outputs of images over 4 MP`,
  };
}

export function mb(bytes: number | undefined): string {
  return bytes === undefined ? '–' : (bytes / 1048576).toFixed(1);
}
