// `npm run bench -- info`: what `format=json` costs (issue 48 asks for an answer in under 100 ms). Every
// photo of ../shared/corpus/camera/ is sent to POST /compress with `format=json` (pro key, one at a time):
// the first request of the run warms the engine (not counted), then each photo BENCH_INFO_ROUNDS times.
// Per photo: the median of the client's wall time (upload on loopback, the work, the answer) and of the
// service's Server-Timing total (the work alone), the file's bytes and pixels, and whether the answer had
// its preview (`thumbhash` not null). The wall time includes sending the file: a 10 MB upload on
// loopback is itself several milliseconds, which the service cannot save. BENCH_INFO_PHOTOS limits the
// photos (a number: the first N in name order); BENCH_INFO_CORPUS reads another folder.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseServerTiming } from './lib/compress-client.ts';
import type { Service } from './lib/server.ts';

const root = resolve(new URL('../../', import.meta.url).pathname);
const cameraDir = (): string =>
  process.env.BENCH_INFO_CORPUS ??
  [resolve(root, '../shared/corpus/camera'), resolve(root, '../../shared/corpus/camera')].find(existsSync) ??
  resolve(root, '../shared/corpus/camera');

const ROUNDS = Number(process.env.BENCH_INFO_ROUNDS ?? 5);
/** What issue 48 asks of an info answer. */
export const INFO_TARGET_MS = 100;

export interface InfoRow {
  photo: string;
  bytes: number;
  megapixels: number;
  progressive: boolean;
  status: number;
  /** Medians over the rounds, ms. */
  wallMs: number;
  serverMs: number;
  maxServerMs: number;
  /** The preview's part of the server's time (its decode at a DCT scale, ThumbHash and colour excluded). */
  previewMs: number;
  preview: boolean;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function info(
  service: Service,
  bytes: Uint8Array,
  name: string,
): Promise<{ status: number; wallMs: number; serverMs: number; previewMs: number; body: Record<string, unknown> }> {
  const form = new FormData();
  form.set('image', new Blob([bytes], { type: 'image/jpeg' }), name);
  form.set('format', 'json');
  const t0 = performance.now();
  const res = await fetch(`${service.base}/api/v1/compress`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.demoKeys.image_pro}` },
    body: form,
  });
  const body = (await res.json()) as Record<string, unknown>;
  const wallMs = performance.now() - t0;
  const timing = res.headers.get('server-timing');
  const previewMs = Number(/preview;dur=([\d.]+)/.exec(timing ?? '')?.[1] ?? Number.NaN);
  return { status: res.status, wallMs, serverMs: parseServerTiming(timing).total ?? Number.NaN, previewMs, body };
}

export async function benchInfo(service: Service): Promise<InfoRow[]> {
  const dir = cameraDir();
  const limit = Number(process.env.BENCH_INFO_PHOTOS ?? Infinity);
  const photos = readdirSync(dir)
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort()
    .slice(0, limit);
  const rows: InfoRow[] = [];
  // The engine's first instance and the route's code, compiled once: not what a photo costs.
  await info(service, new Uint8Array(readFileSync(join(dir, photos[0]!))), photos[0]!);
  for (const photo of photos) {
    const bytes = new Uint8Array(readFileSync(join(dir, photo)));
    const walls: number[] = [];
    const servers: number[] = [];
    const previews: number[] = [];
    let last: Awaited<ReturnType<typeof info>> | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      last = await info(service, bytes, photo);
      walls.push(last.wallMs);
      servers.push(last.serverMs);
      previews.push(last.previewMs);
    }
    const data = (last?.body ?? {}) as { width?: number; height?: number; thumbhash?: string | null };
    rows.push({
      photo,
      bytes: bytes.length,
      megapixels: ((data.width ?? 0) * (data.height ?? 0)) / 1e6,
      progressive: isProgressive(bytes),
      status: last?.status ?? 0,
      wallMs: median(walls),
      serverMs: median(servers),
      maxServerMs: Math.max(...servers),
      previewMs: median(previews),
      preview: typeof data.thumbhash === 'string',
    });
    console.error(
      `info ${photo}: ${rows.at(-1)!.status} server ${median(servers).toFixed(0)} ms, wall ${median(walls).toFixed(0)} ms`,
    );
  }
  return rows;
}

/** Whether the JPEG's first frame header is progressive (SOF2), as the preview's cost depends on it. */
function isProgressive(bytes: Uint8Array): boolean {
  for (let i = 2; i + 3 < bytes.length; ) {
    if (bytes[i] !== 0xff) return false;
    const marker = bytes[i + 1]!;
    if (marker === 0xc2) return true;
    if (marker === 0xc0 || marker === 0xc1 || marker === 0xda) return false;
    i += 2 + ((bytes[i + 2]! << 8) | bytes[i + 3]!);
  }
  return false;
}

export function infoReport(rows: InfoRow[]): string {
  const ok = rows.filter((r) => r.status === 200);
  const over = ok.filter((r) => r.serverMs >= INFO_TARGET_MS);
  const lines = [
    `format=json on ${rows.length} camera photos, ${ROUNDS} rounds each after a warm-up, pro key, one at a time; medians. ` +
      `Server-Timing total: median ${median(ok.map((r) => r.serverMs)).toFixed(0)} ms (max of medians ${Math.max(...ok.map((r) => r.serverMs)).toFixed(0)}); ` +
      `wall: median ${median(ok.map((r) => r.wallMs)).toFixed(0)} ms; ${over.length} of ${ok.length} at or over ${INFO_TARGET_MS} ms on the server.`,
    '',
    '| photo | KB | MP | progressive | status | server ms | max | of it the preview | wall ms | preview made |',
    '|---|---:|---:|---|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.photo} | ${(r.bytes / 1024).toFixed(0)} | ${r.megapixels.toFixed(1)} | ${r.progressive ? 'yes' : 'no'} | ${r.status} | ${r.serverMs.toFixed(0)} | ${r.maxServerMs.toFixed(0)} | ${r.previewMs.toFixed(0)} | ${r.wallMs.toFixed(0)} | ${r.preview ? 'yes' : 'no'} |`,
    ),
  ];
  return lines.join('\n');
}
