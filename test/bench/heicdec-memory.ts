// The HEIC decoder's memory for a HEIC that is one picture (not a grid), measured from outside the C code
// (`npx node test/bench/heicdec-memory.ts`): wasm/codec/sr_heicdec.wasm instantiated fresh in this Node
// process per file, driven as wasm/heicdec-engine.ts drives it (create, the file copied in, parse, the
// one tile, every row read out). The module grows by exactly what malloc asks
// (MEMORY_GROWTH_GEOMETRIC_STEP=0) and a WebAssembly memory never shrinks, so its byteLength after the
// rows is the instance's high-water mark. Printed beside it: what src/compress/heic-input/memory.ts plans
// for the decoder (the file's copy is the plan's upload part).
// Files: the conversions bench's synthetic photo (lib/images.ts) scaled to 2000×1500 and 4000×3000 (a
// camera's 12 MP), by Debian's heif-enc (-q 60, as the inputs bench) at 8 and 10 bits (from a 16-bit PNG),
// 4:2:0 and 4:4:4, kept in the system's temporary folder. BENCH_HEICDEC_ONLY=12mp (comma-separated): only the files
// whose name has one of these; BENCH_HEICDEC_FILES=a.heic,b.heic: these files too (the inputs bench's
// oppo.heic, say). BENCH_HEICDEC_BEFORE=DIR: another build's sr_heicdec.{js,wasm} (the one
// that converted the whole picture to RGBA, whose exports are band and stride) measured too, and the
// largest difference between the two builds' pixels.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { readHeader } from '../../src/compress/header.ts';
import { nodeModule } from './lib/engine-node.ts';
import { syntheticPhoto } from './lib/images.ts';

const CODEC = new URL('../../wasm/codec/', import.meta.url);
const DIR = join(tmpdir(), 'shrinkray-bench-heicdec');
const MB = 1024 * 1024;
const ONLY = (process.env.BENCH_HEICDEC_ONLY ?? '').split(',').filter(Boolean);
const BEFORE = process.env.BENCH_HEICDEC_BEFORE;

async function files(): Promise<{ name: string; path: string }[]> {
  mkdirSync(DIR, { recursive: true });
  const made: { name: string; path: string }[] = [];
  for (const [mp, width, height] of [
    [3, 2000, 1500],
    [12, 4000, 3000],
  ] as const) {
    for (const [depth, yuv] of [
      [8, '420'],
      [10, '420'],
      [8, '444'],
      [10, '444'],
    ] as const) {
      const name = `${mp}mp-${width}x${height}-${depth}bit-${yuv}`;
      if (ONLY.length > 0 && !ONLY.some((part) => name.includes(part))) continue;
      const path = join(DIR, `${name}.heic`);
      if (!existsSync(path)) {
        const png = join(DIR, `${width}x${height}-${depth}.png`);
        const photo = await syntheticPhoto(mp);
        let image = sharp(photo.path).resize(width, height, { fit: 'fill' });
        if (depth > 8) image = image.toColourspace('rgb16');
        await image.png({ compressionLevel: 1 }).toFile(png);
        const args = ['-q', '60', '-p', `chroma=${yuv}`, ...(depth > 8 ? ['-b', `${depth}`] : []), '-o', path, png];
        const run = spawnSync('heif-enc', args, { encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`heif-enc: ${run.stderr}`);
      }
      made.push({ name, path });
    }
  }
  for (const path of (process.env.BENCH_HEICDEC_FILES ?? '').split(',').filter(Boolean))
    made.push({ name: path.replace(/.*\//, ''), path });
  return made;
}

interface Decoded {
  stages: number[];
  ms: number;
  /** Every row's RGBA, kept only to compare two builds. */
  pixels?: Uint8Array;
}

/** One file decoded in a fresh instance of the build in `codec`: the memory after each stage. */
async function decode(codec: URL, bytes: Uint8Array, keep: boolean): Promise<Decoded> {
  const { m, memory } = await nodeModule(new URL('sr_heicdec.wasm', codec), new URL('sr_heicdec.js', codec).href);
  const call = (name: string, ...args: number[]) => m[`_sr_heicdec_${name}`]!(...args);
  const stages = [memory.buffer.byteLength];
  const decoder = call('create') >>> 0;
  const input = m._malloc!(bytes.length) >>> 0;
  new Uint8Array(memory.buffer).set(bytes, input);
  const header = readHeader('heic', bytes);
  if (call('parse', decoder, input, bytes.length, header.heic!.codedPixels) !== 0) throw new Error('parse failed');
  stages.push(memory.buffer.byteLength);
  const width = call('info', decoder, 0);
  const height = call('info', decoder, 1);
  const t0 = performance.now();
  if (call('tile', decoder, 0, 0) !== 0) throw new Error('decode failed');
  stages.push(memory.buffer.byteLength);
  const pixels = keep ? new Uint8Array(width * height * 4) : undefined;
  const rowApi = typeof m._sr_heicdec_row === 'function';
  for (let y = 0; y < height; y++) {
    const at = rowApi ? call('row', decoder, y) >>> 0 : (call('band', decoder) >>> 0) + y * call('stride', decoder);
    if (!at) throw new Error(`row ${y} failed`);
    pixels?.set(new Uint8Array(memory.buffer, at, width * 4), y * width * 4);
  }
  const ms = performance.now() - t0;
  stages.push(memory.buffer.byteLength);
  call('destroy', decoder);
  return { stages, ms, pixels };
}

const mb = (bytes: number) => (bytes / MB).toFixed(1);

console.log(
  '| file | build | bytes | grew (parsed → decoded → rows), MB | grew in all, MB | bytes a pixel | plan (decoder), MB | decode ms | largest difference |',
);
console.log('|---|---|---:|---|---:|---:|---:|---:|---:|');
for (const file of await files()) {
  const bytes = new Uint8Array(readFileSync(file.path));
  const header = readHeader('heic', bytes);
  const pixels = header.width * header.height;
  const builds: [string, URL][] = [['this', CODEC]];
  if (BEFORE) builds.unshift(['before', new URL(`file://${BEFORE.replace(/\/?$/, '/')}`)]);
  let reference: Uint8Array | undefined;
  for (const [label, codec] of builds) {
    const { stages, ms, pixels: rgba } = await decode(codec, bytes, builds.length > 1);
    let worst = '';
    if (rgba && reference) {
      let most = 0;
      for (let i = 0; i < rgba.length; i++) most = Math.max(most, Math.abs(rgba[i]! - reference[i]!));
      worst = `${most}`;
    }
    reference ??= rgba;
    const grew = stages.at(-1)! - stages[0]!;
    const steps = stages.slice(1).map((s) => mb(s - stages[0]!));
    console.log(
      `| ${file.name} | ${label} | ${bytes.length.toLocaleString('en')} | ${steps.join(' → ')} | ${mb(grew)} | ${(grew / pixels).toFixed(2)} | ${mb(header.heic!.decoderBytes)} | ${ms.toFixed(0)} | ${worst} |`,
    );
  }
}
