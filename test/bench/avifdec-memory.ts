// The AVIF decoder's memory, measured from outside the C code (`npx node test/bench/avifdec-memory.ts`):
// wasm/codec/sr_avifdec.wasm instantiated fresh in this Node process per file, driven as
// wasm/avifdec-engine.ts drives it (create, the file copied in, parse, every step, a band buffer, every
// row as RGBA in bands of AVIF_DECODE_BAND_ROWS). The module grows by exactly what malloc asks
// (MEMORY_GROWTH_GEOMETRIC_STEP=0) and a WebAssembly memory never shrinks, so its byteLength after the
// rows is the instance's high-water mark. Printed beside it: what src/compress/avif-input/memory.ts
// plans for the same file (the decoder's part; the file's copy is the plan's upload part).
// Files: the conversions bench's synthetic photo (lib/images.ts) at 3 and 12 MP, by Debian's avifenc
// (speed 9, quantizers 20–30) at 8 and 10 bits, 4:2:0 and 4:4:4, and by sharp as the conversions bench
// makes its AVIF inputs (quality 80, 4:4:4), at 12 and 24 MP. Made files are kept in the system's
// temporary folder. BENCH_AVIFDEC_ONLY=444 (comma-separated): only the files whose name has one of these;
// BENCH_AVIFDEC_FILES=a.avif,b.avif: these files too (the inputs bench's, say).
// BENCH_AVIFDEC_WEBP=1: the rows also go, in batches of 32 as png-path.ts webpFromRows sends them, into a
// fresh engine instance's row-fed WebP encoder (sr_webp_rows_begin/push, then sr_webp_encode at q80,
// method 4, in low-memory mode above WEBP_TOKEN_BUFFER_MAX_PIXELS as the plan picks for an AVIF's
// rows): the other WebAssembly memory of an AVIF → WebP request, and the output's size; and the same
// encoder fed 12 MP of noise (the worst output a picture makes) at q80 and q100.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { readHeader } from '../../src/compress/header.ts';
import { WEBP_TOKEN_BUFFER_MAX_PIXELS } from '../../src/compress/memory-plan.ts';
import { nodeEngine, nodeModule } from './lib/engine-node.ts';
import { syntheticPhoto } from './lib/images.ts';

const CODEC = new URL('../../wasm/codec/', import.meta.url);
const DIR = join(tmpdir(), 'shrinkray-bench-avifdec');
const MB = 1024 * 1024;
/** wasm/avifdec-engine.ts AVIF_DECODE_BAND_ROWS (that module imports the .wasm as a Worker module, which Node cannot). */
const AVIF_DECODE_BAND_ROWS = 32;
const ONLY = (process.env.BENCH_AVIFDEC_ONLY ?? '').split(',').filter(Boolean);

interface Made {
  name: string;
  path: string;
}

async function files(): Promise<Made[]> {
  mkdirSync(DIR, { recursive: true });
  const made: Made[] = [];
  for (const mp of [3, 12]) {
    const photo = await syntheticPhoto(mp);
    for (const depth of [8, 10]) {
      for (const yuv of ['420', '444']) {
        const name = `${mp}mp-${depth}bit-${yuv}-avifenc`;
        const path = join(DIR, `${name}.avif`);
        if (!existsSync(path)) {
          const args = ['-s', '9', '--min', '20', '--max', '30', '-j', '1', '-d', `${depth}`, '-y', yuv];
          const run = spawnSync('avifenc', [...args, photo.path, path], { encoding: 'utf8' });
          if (run.status !== 0) throw new Error(`avifenc: ${run.stderr}`);
        }
        made.push({ name, path });
      }
    }
  }
  for (const mp of [12, 24]) {
    const name = `${mp}mp-8bit-444-sharp-q80`;
    const path = join(DIR, `${name}.avif`);
    if (!existsSync(path)) {
      const photo = await syntheticPhoto(mp);
      writeFileSync(path, await sharp(photo.path).avif({ quality: 80 }).toBuffer());
    }
    made.push({ name, path });
  }
  for (const path of (process.env.BENCH_AVIFDEC_FILES ?? '').split(',').filter(Boolean))
    made.push({ name: path.replace(/.*\//, ''), path });
  return made.filter((f) => ONLY.length === 0 || ONLY.some((part) => f.name.includes(part)));
}

interface Stage {
  stage: string;
  bytes: number;
}

const WEBP = process.env.BENCH_AVIFDEC_WEBP === '1';
/** wasm/webp-engine.ts WEBP_METHOD (a Worker module too). */
const WEBP_METHOD = 4;

interface Webp {
  /** The engine instance's memory: fresh, after the rows (the picture), after the encode. */
  fresh: number;
  filled: number;
  encoded: number;
  output: number;
}

/** A fresh engine instance whose row-fed WebP encoder takes the rows `feed` gives, in batches. */
async function webpEncoder(width: number, height: number, quality = 80) {
  const { m, memory } = await nodeEngine();
  const fresh = memory.buffer.byteLength;
  const job = m._sr_webp_create!(0, 0);
  if (m._sr_webp_rows_begin!(job, width, height, 3, 0) !== 0) throw new Error('rows_begin failed');
  const push = (rgb: Uint8Array, rows: number) => {
    const ptr = m._malloc!(rgb.length);
    new Uint8Array(memory.buffer).set(rgb, ptr);
    if (m._sr_webp_rows_push!(job, ptr, rows, width * 3) !== 0) throw new Error('rows_push failed');
    m._free!(ptr);
  };
  const encode = (): Webp => {
    const filled = memory.buffer.byteLength;
    const lowMemory = width * height > WEBP_TOKEN_BUFFER_MAX_PIXELS ? 1 : 0;
    if (m._sr_webp_encode!(job, quality, 0, WEBP_METHOD, lowMemory, 0) !== 0) throw new Error('encode failed');
    return { fresh, filled, encoded: memory.buffer.byteLength, output: m._sr_webp_output_len!(job) >>> 0 };
  };
  return { push, encode };
}

/** One file decoded in a fresh instance: the memory's size after each stage. */
async function decode(
  bytes: Uint8Array,
): Promise<{ stages: Stage[]; width: number; height: number; ms: number; webp?: Webp }> {
  const { m, memory } = await nodeModule(new URL('sr_avifdec.wasm', CODEC), new URL('sr_avifdec.js', CODEC).href);
  const call = (name: string, ...args: number[]) => m[`_sr_avifdec_${name}`]!(...args);
  const stages: Stage[] = [{ stage: 'fresh', bytes: memory.buffer.byteLength }];
  const at = (stage: string) => stages.push({ stage, bytes: memory.buffer.byteLength });
  const header = readHeader('avif', bytes);
  const decoder = call('create', header.avif!.codedPixels) >>> 0;
  const input = m._malloc!(bytes.length) >>> 0;
  new Uint8Array(memory.buffer).set(bytes, input);
  if (call('parse', decoder, input, bytes.length) !== 0) throw new Error('parse failed');
  at('file copied in, parsed');
  const width = call('info', decoder, 0);
  const height = call('info', decoder, 1);
  const t0 = performance.now();
  // No srGiveWay hook: every step runs through (the service suspends it; the memory is the same).
  for (;;) {
    const r = call('step', decoder);
    if (r < 0) throw new Error('decode failed');
    if (r !== 1) break;
  }
  const ms = performance.now() - t0;
  at('decoded');
  const band = m._malloc!(width * 4 * AVIF_DECODE_BAND_ROWS) >>> 0;
  const webp = WEBP ? await webpEncoder(width, height) : undefined;
  const rgb = new Uint8Array(width * 3 * AVIF_DECODE_BAND_ROWS);
  for (let y = 0; y < height; y += AVIF_DECODE_BAND_ROWS) {
    const n = Math.min(AVIF_DECODE_BAND_ROWS, height - y);
    if (call('rows', decoder, band, y, n, 4) !== 0) throw new Error('rows failed');
    if (!webp) continue;
    const rgba = new Uint8Array(memory.buffer, band, n * width * 4);
    for (let i = 0, o = 0; i < rgba.length; i += 4, o += 3) {
      rgb[o] = rgba[i]!;
      rgb[o + 1] = rgba[i + 1]!;
      rgb[o + 2] = rgba[i + 2]!;
    }
    webp.push(rgb.subarray(0, n * width * 3), n);
  }
  at('rows read');
  call('destroy', decoder);
  return { stages, width, height, ms, webp: webp?.encode() };
}

const mb = (bytes: number) => (bytes / MB).toFixed(1);

/** The engine's memory past the picture, a pixel: besides the output, and the output's own. */
const webpLine = (label: string, w: Webp, pixels: number) =>
  `| ${label}: the engine instance fresh ${mb(w.fresh)} MB, rows in ${mb(w.filled)}, encoded ${mb(w.encoded)}; past the picture ${((w.encoded - w.filled - w.output) / pixels).toFixed(2)} a pixel besides the output, the output ${(w.output / pixels).toFixed(2)} a pixel (${w.output.toLocaleString('en')} bytes) |`;

/** 12 MP of noise into the row-fed WebP encoder: the largest output, so the most the encoder holds of it. */
async function noiseWebp(quality: number): Promise<Webp> {
  const [width, height] = [4240, 2832];
  const webp = await webpEncoder(width, height, quality);
  const rgb = new Uint8Array(width * 3 * AVIF_DECODE_BAND_ROWS);
  let seed = 1;
  for (let y = 0; y < height; y += AVIF_DECODE_BAND_ROWS) {
    const n = Math.min(AVIF_DECODE_BAND_ROWS, height - y);
    for (let i = 0; i < n * width * 3; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      rgb[i] = seed >>> 24;
    }
    webp.push(rgb.subarray(0, n * width * 3), n);
  }
  return webp.encode();
}

console.log(
  '| file | size | bytes | grew (parsed → decoded → rows), MB | grew in all, MB | memory, MB | bytes a pixel | plan (decoder + file), MB | decode ms |',
);
console.log('|---|---|---:|---|---:|---:|---:|---:|---:|');
for (const file of await files()) {
  const bytes = new Uint8Array(readFileSync(file.path));
  const header = readHeader('avif', bytes);
  const { stages, width, height, ms, webp } = await decode(bytes);
  const fresh = stages[0]!.bytes;
  const steps = stages.slice(1).map((s) => mb(s.bytes - fresh));
  const grew = stages.at(-1)!.bytes - fresh;
  const planned = header.avif!.decoderBytes + bytes.length;
  console.log(
    `| ${file.name} | ${width}×${height} | ${bytes.length.toLocaleString('en')} | ${steps.join(' → ')} | ${mb(grew)} | ${mb(stages.at(-1)!.bytes)} | ${(grew / (width * height)).toFixed(2)} | ${mb(planned)} | ${ms.toFixed(0)} |`,
  );
  if (webp) console.log(webpLine('→ WebP q80', webp, width * height));
}
if (WEBP)
  for (const quality of [80, 100])
    console.log(webpLine(`12 MP of noise → WebP q${quality}`, await noiseWebp(quality), 4240 * 2832));
