// `npx node test/bench/jpeg-window-ab.ts OLD_CODEC_DIR`: the JPEG engine's row puller on a crop, an older
// build (OLD_CODEC_DIR: its sr_jpeg.{js,wasm}, e.g. `git show <commit>:wasm/codec/sr_jpeg.wasm`) against
// this one (wasm/codec), in one Node process, runs interleaved: the old one decodes from the top and is
// stopped after the crop's last row (as the transform path stopped it); this one is given the crop as
// its window (sr_job_set_window) and decodes only what the box takes. Per case: median ms of the pull,
// rows decoded, the engine's heap growth, and whether the rows are the same bytes. The photo is the
// largest of the camera corpus resized by sharp to 6000×4000 and 8000×6000 (q90), as `bench -- transform`
// makes them.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { CAMERA_DIR } from './jpeg-camera.ts';
import { type NodeEngine, nodeModule } from './lib/engine-node.ts';

const RUNS = 5;
const BATCH = 32;

interface Case {
  what: string;
  photo: '24' | '48';
  scaleNum: number;
  size: [number, number];
  box: { x: number; y: number; width: number; height: number };
}

const CASES: Case[] = [
  {
    what: '24 MP centre 1000×1000 at full scale',
    photo: '24',
    scaleNum: 8,
    size: [6000, 4000],
    box: { x: 2500, y: 1500, width: 1000, height: 1000 },
  },
  {
    what: '24 MP bottom-right 1000×1000 at full scale',
    photo: '24',
    scaleNum: 8,
    size: [6000, 4000],
    box: { x: 5000, y: 3000, width: 1000, height: 1000 },
  },
  {
    what: '24 MP fit=cover 1000×1000 (2/8, 1500×1000, centre)',
    photo: '24',
    scaleNum: 2,
    size: [1500, 1000],
    box: { x: 250, y: 0, width: 1000, height: 1000 },
  },
  {
    what: '48 MP fit=cover 1080×1080 (2/8 → 1440×1080, centre)',
    photo: '48',
    scaleNum: 2,
    size: [1440, 1080],
    box: { x: 180, y: 0, width: 1080, height: 1080 },
  },
];

function largest(): Uint8Array {
  const files = readdirSync(CAMERA_DIR).filter((f) => /\.jpe?g$/i.test(f));
  // Canon_Powershot_A2500.JPG is the one with the most pixels (4608×3456): the bench's "largest photo".
  const name = files.find((f) => f.startsWith('Canon_Powershot_A2500')) ?? files[0]!;
  return new Uint8Array(readFileSync(join(CAMERA_DIR, name)));
}

async function resized(source: Uint8Array, width: number, height: number): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp(source, { limitInputPixels: false })
      .rotate()
      .resize(width, height, { fit: 'fill' })
      .jpeg({ quality: 90 })
      .toBuffer(),
  );
}

/** One pull of the crop's rows: ms, rows decoded, heap growth (bytes) and the rows' SHA-256. */
function pull(e: NodeEngine, jpeg: Uint8Array, c: Case, windowed: boolean) {
  const { m } = e;
  const heap0 = e.memory.buffer.byteLength;
  const input = m._malloc!(jpeg.length);
  new Uint8Array(e.memory.buffer).set(jpeg, input);
  const job = m._sr_job_create!(input, jpeg.length);
  const t0 = performance.now();
  if (m._sr_job_header!(job) !== 0) throw new Error('header');
  m._sr_job_close_header!(job);
  if (m._sr_job_set_pixels!(job, c.scaleNum, c.size[0], c.size[1], 1) !== 0) throw new Error('pixels');
  if (windowed && m._sr_job_set_window!(job, c.box.x, c.box.y, c.box.width, c.box.height) !== 0)
    throw new Error('window');
  const width = windowed ? c.box.width : c.size[0];
  const rowBytes = width * 3;
  const buffer = m._malloc!(rowBytes * BATCH);
  const hash = createHash('sha256');
  if (m._sr_job_pull_begin!(job) !== 0) throw new Error('pull_begin');
  let y = windowed ? c.box.y : 0;
  const end = c.box.y + c.box.height;
  while (y < end) {
    const n = m._sr_job_pull!(job, buffer, Math.min(BATCH, end - y));
    if (n <= 0) throw new Error(`pull ${n}`);
    const heap = new Uint8Array(e.memory.buffer);
    for (let r = 0; r < n; r++, y++) {
      if (y < c.box.y) continue;
      const at = buffer + r * rowBytes + (windowed ? 0 : c.box.x * 3);
      hash.update(heap.subarray(at, at + c.box.width * 3));
    }
  }
  const ms = performance.now() - t0;
  const rows = m._sr_job_rows_decoded!(job);
  const growth = e.memory.buffer.byteLength - heap0;
  m._sr_job_destroy!(job);
  m._free!(buffer);
  m._free!(input);
  return { ms, rows, growth, sha: hash.digest('hex').slice(0, 16) };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

async function main() {
  const oldDir = process.argv[2];
  if (!oldDir) throw new Error('usage: npx node test/bench/jpeg-window-ab.ts OLD_CODEC_DIR');
  const base = largest();
  const photos = { '24': await resized(base, 6000, 4000), '48': await resized(base, 8000, 6000) };
  const dir = new URL(`file://${oldDir.replace(/\/?$/, '/')}`);
  const here = new URL('../../wasm/codec/', import.meta.url);
  console.log(
    '| crop | before: ms (rows decoded) | after: ms (rows decoded) | after ÷ before | heap growth before / after (fresh instance) | same rows |',
  );
  console.log('|---|---:|---:|---:|---:|---|');
  for (const c of CASES) {
    const before: number[] = [];
    const after: number[] = [];
    let b: ReturnType<typeof pull> | undefined;
    let a: ReturnType<typeof pull> | undefined;
    let growthBefore = 0;
    let growthAfter = 0;
    for (let i = 0; i < RUNS; i++) {
      // A fresh instance each run: its heap growth is what the pull needed.
      const oldEngine = await nodeModule(new URL('sr_jpeg.wasm', dir), new URL('sr_jpeg.js', dir).href);
      b = pull(oldEngine, photos[c.photo], c, false);
      const newEngine = await nodeModule(new URL('sr_jpeg.wasm', here), new URL('sr_jpeg.js', here).href);
      a = pull(newEngine, photos[c.photo], c, true);
      before.push(b.ms);
      after.push(a.ms);
      growthBefore = Math.max(growthBefore, b.growth);
      growthAfter = Math.max(growthAfter, a.growth);
    }
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    console.log(
      `| ${c.what} | ${median(before).toFixed(0)} (${b!.rows}) | ${median(after).toFixed(0)} (${a!.rows}) | ${(median(after) / median(before)).toFixed(2)} | ${mb(growthBefore)} / ${mb(growthAfter)} MB | ${a!.sha === b!.sha ? 'yes' : `NO (${b!.sha} ≠ ${a!.sha})`} |`,
    );
  }
}

await main();
