// `npm run bench -- isolate-stall`: does one compression hold up every other request of its isolate?
// (issue 47, finding 4). `npm run dev` runs the Worker in one workerd thread, as self-hosting does, so
// while a compression runs, GET /api/v1/health is probed every PROBE_EVERY_MS, one probe at a time (the
// next starts PROBE_EVERY_MS after the last started, or when it answers if that is later), and every
// probe's answer time is kept: p50, p95 and max per case. One at a time, because probes fired regardless
// of answers are a load of their own: at 20 a second on a machine shared ×7 (each probe then costs the
// workerd thread about 47 ms) they alone filled the thread and every answer queued behind the others.
// Target: while a 12 MP photo compresses to AVIF, p95 ≤ 250 ms and never over 2 s.
// Inputs are made once from a real camera photograph of /work/shared/corpus/camera (resized with sharp,
// Lanczos3) and cached under test/bench/.cache/stall/.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { type CompressOptions, compress } from './lib/compress-client.ts';
import { percentile } from './lib/load.ts';
import { PNG_CACHE } from './lib/png-inputs.ts';
import type { Service } from './lib/server.ts';

/** Time between two probes' starts. */
export const PROBE_EVERY_MS = 50;
/** Probes answered on an idle service before each case, for the baseline row. */
const IDLE_PROBES = 40;
/** The camera photograph every input is made from (4608 × 3456, 16 MP). */
const SOURCE = process.env.BENCH_STALL_SOURCE ?? '/work/shared/corpus/camera/Kodak_PIXPRO_AZ521.jpg';
const CACHE = new URL('./.cache/stall/', import.meta.url).pathname;

interface Case {
  name: string;
  input: () => Promise<{ path: string; file: string }>;
  options: CompressOptions;
}

/** The source resized to width × height, written by `write` into the cache (once). */
async function made(file: string, width: number, height: number, write: (s: Sharp) => Sharp) {
  const path = join(CACHE, file);
  if (!existsSync(path)) {
    mkdirSync(CACHE, { recursive: true });
    const img = sharp(SOURCE, { limitInputPixels: false })
      .rotate()
      .resize({ width, height, fit: 'cover', kernel: 'lanczos3' });
    writeFileSync(path, await write(img).toBuffer());
  }
  return { path, file };
}

const photo12 = () => made('photo-4032x3024.jpg', 4032, 3024, (s) => s.jpeg({ quality: 90, mozjpeg: false }));
const photo24 = () => made('photo-6000x4000.jpg', 6000, 4000, (s) => s.jpeg({ quality: 85, mozjpeg: false }));
const photoPng = () => made('photo-2048x1536.png', 2048, 1536, (s) => s.png({ compressionLevel: 9 }));
// One AV1 frame, no grid (sharp writes none): the AVIF decoder's longest single call.
const photoAvif = () => made('photo-4032x3024.avif', 4032, 3024, (s) => s.avif({ quality: 60, effort: 2 }));
const photo12Webp = () => made('photo-4032x3024.webp', 4032, 3024, (s) => s.webp({ quality: 90 }));
/** The PNG bench's 12 MP screenshot (4000 × 3000, rendered by Chromium): `npm run bench -- png` makes it once. */
async function screenshot12() {
  const path = join(PNG_CACHE, '12-MP-screenshot-v1.png');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run bench -- png\` once, which renders it`);
  return { path, file: 'screenshot-4000x3000.png' };
}

export const STALL_CASES: Case[] = [
  { name: '12 MP JPEG → AVIF', input: photo12, options: { format: 'avif', quality: 80 } },
  { name: '24 MP JPEG → JPEG', input: photo24, options: { format: 'jpeg', quality: 80 } },
  { name: '3 MP PNG → palette PNG', input: photoPng, options: { format: 'png', palette: true } },
  { name: '12 MP JPEG → WebP', input: photo12, options: { format: 'webp', quality: 80 } },
  { name: '24 MP JPEG → WebP', input: photo24, options: { format: 'webp', quality: 80 } },
  { name: '12 MP AVIF input → JPEG', input: photoAvif, options: { format: 'jpeg', quality: 80 } },
  { name: '12 MP WebP → JPEG', input: photo12Webp, options: { format: 'jpeg', quality: 80 } },
  { name: '12 MP WebP → WebP', input: photo12Webp, options: { format: 'webp', quality: 80 } },
  // JPEG XL: the default budget admits about 1.2 MP (jxlPeakBytes), and the encode is about 1.3 s a MP.
  { name: '12 MP JPEG → JPEG XL, 1024 wide', input: photo12, options: { format: 'jxl', quality: 80, width: 1024 } },
  // At 4000 × 3000 the plan refuses lossless WebP (about 473 MB); 1776 wide is the largest it admits.
  {
    name: '12 MP screenshot PNG → lossless WebP, 1776 wide',
    input: screenshot12,
    options: { format: 'webp', lossless: true, width: 1776 },
  },
  // Screen content: intra block copy's hash is built for a whole cell before its first superblock.
  {
    name: '12 MP screenshot PNG → AVIF (screen content)',
    input: screenshot12,
    options: { format: 'avif', quality: 80 },
  },
];

export interface StallRow {
  name: string;
  status: number;
  error?: string;
  compressMs: number;
  /** The same compression with nothing else running (the warm-up). */
  aloneMs: number;
  probes: number;
  p50: number;
  p95: number;
  max: number;
  idleP50: number;
  /** The machine's 1-minute load average when the case ended (the machine is shared). */
  load: number;
  /** The output's SHA-256 (first 16 hex digits), to check that giving way changes no byte. */
  outputSha: string;
}

/** One probe: its answer time in ms (a failed probe counts as the time it took to fail, and is reported). */
async function probe(url: string, key: string, failures: string[]): Promise<number> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
    if (res.status !== 200) failures.push(`HTTP ${res.status}`);
  } catch (err) {
    failures.push((err as Error).message);
  }
  return performance.now() - t0;
}

/** BENCH_STALL_CASES=AVIF,palette: only the cases whose names contain one of these. */
const WANTED = (process.env.BENCH_STALL_CASES ?? '').split(',').filter(Boolean);

export async function benchIsolateStall(service: Service): Promise<StallRow[]> {
  const key = service.demoKeys.tools_free!;
  const url = `${service.base}/api/v1/health`;
  const rows: StallRow[] = [];
  for (const c of STALL_CASES.filter((c) => WANTED.length === 0 || WANTED.some((w) => c.name.includes(w)))) {
    const { path, file } = await c.input();
    const bytes = new Uint8Array(readFileSync(path));
    const failures: string[] = [];
    // Warm: the engine instantiated for this format, the key's Durable Object, the JIT. Its time is the
    // compression's own, with nothing else running (first in the isolate, so a little over).
    const alone0 = performance.now();
    await compress(service.base, service.demoKeys.image_pro!, bytes, file, c.options);
    const aloneMs = performance.now() - alone0;
    const idle: number[] = [];
    for (let i = 0; i < IDLE_PROBES; i++) idle.push(await probe(url, key, failures));

    const probes: Promise<number>[] = [];
    let running = true;
    const ticker = (async () => {
      while (running) {
        const next = new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
        const answered = probe(url, key, failures);
        probes.push(answered);
        await Promise.all([answered, next]);
      }
    })();
    // The compression starts once a few probes are out, so the first probes see the upload too.
    await new Promise((r) => setTimeout(r, 2 * PROBE_EVERY_MS));
    const t0 = performance.now();
    const result = await compress(service.base, service.demoKeys.image_pro!, bytes, file, c.options);
    const compressMs = performance.now() - t0;
    running = false;
    await ticker;
    const times = (await Promise.all(probes)).sort((a, b) => a - b);
    const idleSorted = idle.sort((a, b) => a - b);
    rows.push({
      name: c.name,
      status: result.status,
      error: result.error ?? (failures.length > 0 ? `${failures.length} probes failed: ${failures[0]}` : undefined),
      compressMs,
      aloneMs,
      probes: times.length,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      max: times[times.length - 1]!,
      idleP50: percentile(idleSorted, 50),
      load: loadavg()[0]!,
      outputSha: result.output ? createHash('sha256').update(result.output).digest('hex').slice(0, 16) : '',
    });
    console.log(JSON.stringify(rows[rows.length - 1]));
  }
  return rows;
}

export function isolateStallReport(result: { rows: StallRow[] }): string {
  const header =
    `GET /api/v1/health probed every ${PROBE_EVERY_MS} ms (one at a time) while one compression runs in the same \`npm run dev\` ` +
    `(one workerd thread); Node ${process.version} client on ${cpus().length} cores. Inputs from ${SOURCE.split('/').pop()}.`;
  return [
    header,
    '',
    '| case | status | compression ms | alone ms | probes | p50 ms | p95 ms | max ms | idle p50 ms | load | output sha256 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...result.rows.map(
      (r) =>
        `| ${r.name} | ${r.status}${r.error ? ` (${r.error})` : ''} | ${r.compressMs.toFixed(0)} | ${r.aloneMs.toFixed(0)} | ${r.probes} | ${r.p50.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.max.toFixed(0)} | ${r.idleP50.toFixed(1)} | ${r.load.toFixed(1)} | ${r.outputSha} |`,
    ),
  ].join('\n');
}
