// `npm run bench -- inputs`: decoding the inputs of issue 49, AVIF first, then HEIC and a 12 MP GIF (sharp's
// from the same photo, against sharp's decode). AVIFs made here by Debian's avifenc (speed 9, quantizers
// 20–30, one thread) from a 13 MP phone photo of ../shared/corpus/camera (Oppo_R7_Plus.jpg, 3120×4160):
// 8-bit 4:2:0 as it is, 10-bit 4:4:4 as it is, and 8-bit 4:2:0 enlarged by sharp to the largest size the
// plan admits for PNG output at the default budget (found from the plan itself). HEICs by Debian's heif-enc:
// the photo as one picture, and scaled to 12 MP and to 48 MP (an iPhone's largest) as a grid of 512×512
// tiles as an iPhone writes it. Each is
// compressed to PNG at full size (lossless: the output is our decode) on a fresh service: the first request (cold: the
// decoder module instantiated) and three more (warm, medians): Server-Timing total and decode, workerd's
// peak RSS growth. SSIMULACRA2 of our decode against Debian's `avifdec -d 8`. More, slow to make, run only
// when BENCH_INPUTS_ONLY names them: `largest-grid`, the widest 3:4 grid HEIC the plan admits as PNG at
// full size; `anim`, two animations compressed to animated WebP at full size (no SSIMULACRA2: the output
// is not one picture): `anim-1000`, a GIF at the animation limits (100 frames of 1000×1000: 100 MP of
// frames) where a small part moves, and `anim-pan`, an animated WebP whose every frame changes, 60 frames
// of 1000×1000 (the plan counts every output frame of a WebP source: 100 would not fit the budget); and
// `single-largest`, a HEIC that is one picture of HEIC_SINGLE_PICTURE_MAX_PIXELS, to an 800 px JPEG (at
// 1024 px it plans 101 MB: 422, "it fits with width=894 or less").
// Corpus files stay in ../shared; the made files in the system's temporary folder.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { readHeader } from '../../src/compress/header.ts';
import { HEIC_SINGLE_PICTURE_MAX_PIXELS } from '../../src/compress/heic-input/memory.ts';
import { plan } from '../../src/compress/memory-plan.ts';
import { parseServerTiming } from './lib/compress-client.ts';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import { mbOf, withRssPeak } from './lib/rss.ts';
import type { Service } from './lib/server.ts';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const shared = (path: string) =>
  [resolve(root, '../shared', path), resolve(root, '../../shared', path)].find(existsSync) ??
  resolve(root, '../shared', path);
const PHOTO = shared('corpus/camera/Oppo_R7_Plus.jpg');
const DIR = join(tmpdir(), 'shrinkray-bench-inputs');
const BUDGET = 100 * 1024 * 1024;
const WARM_ROUNDS = 3;
const log = (line: string) => console.error(line);

export interface InputRun {
  file: string;
  width: number;
  height: number;
  bytes: number;
  status: number;
  coldTotalMs?: number;
  coldDecodeMs?: number;
  coldGrowthBytes?: number;
  warmTotalMs?: number;
  warmDecodeMs?: number;
  warmGrowthBytes?: number;
  estimateBytes: number;
  ssimulacra2?: number;
  error?: string;
}

function avifenc(input: string, output: string, args: string[]): void {
  if (existsSync(output)) return;
  const run = spawnSync('avifenc', ['-s', '9', '--min', '20', '--max', '30', '-j', '1', ...args, input, output], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`avifenc: ${run.stderr}`);
}

/** HEIC files (made by Debian's heif-enc), GIFs and an animated WebP (by sharp) beside the AVIFs: the input format by the file's name. */
const formatOf = (file: string): 'avif' | 'heic' | 'gif' | 'webp' =>
  file.endsWith('.heic') ? 'heic' : file.endsWith('.gif') ? 'gif' : file.endsWith('.webp') ? 'webp' : 'avif';

/** A 12 MP GIF: the photo at 3024×4032 as sharp writes it (libimagequant's palette, dithered; one frame). */
async function gifOf(source: string, output: string): Promise<void> {
  if (existsSync(output)) return;
  await sharp(readFileSync(source)).resize(3024, 4032).gif().toFile(output);
}

/**
 * The largest GIF of the photo an upload admits: the upload limit (10 MB), not the plan, binds first (a GIF
 * to PNG plans about 2.5 bytes a pixel: 40 MP would fit the budget, and no photo GIF that large is under
 * 10 MB). 64 colours without dithering, which LZW packs best: 4000×5333, 9.6 MB.
 */
async function largestGif(source: string, output: string): Promise<void> {
  if (existsSync(output)) return;
  await sharp(readFileSync(source)).rotate().resize(4000, 5333).gif({ dither: 0, colours: 64 }).toFile(output);
}

function heifEnc(input: string, output: string): void {
  if (existsSync(output)) return;
  const run = spawnSync('heif-enc', ['-q', '60', '-o', output, input], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`heif-enc: ${run.stderr}`);
}

/**
 * A 12 MP HEIC as an iPhone writes it: the photo scaled to 3024×4032, as a grid of 6 × 8 tiles of 512×512,
 * each encoded by heif-enc at the same quality (test/fixtures/heic/make-fixtures.py's `grid`: heif-enc 1.15
 * writes no grid itself).
 */
async function heicGrid(source: string, output: string, width = 3024, height = 4032): Promise<void> {
  if (existsSync(output)) return;
  const png = join(DIR, `oppo-${width}.png`);
  await sharp(readFileSync(source)).resize(width, height).png({ compressionLevel: 1 }).toFile(png);
  const work = join(DIR, `grid-tiles-${width}`);
  mkdirSync(work, { recursive: true });
  const script = join(root, 'test/fixtures/heic/make-fixtures.py');
  const run = spawnSync('python3', [script, work, 'grid', png, output], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`make-fixtures.py grid: ${run.stderr}`);
}

/** What a file is compressed to: PNG at full size; an animation to animated WebP; the largest single-picture HEIC to an 800 px JPEG. */
interface Output {
  format: 'png' | 'webp' | 'jpeg';
  width?: number;
}
const outputOf = (file: string): Output =>
  /-anim-/.test(file) ? { format: 'webp' } : /-single-/.test(file) ? { format: 'jpeg', width: 800 } : { format: 'png' };

/** The plan's estimate of that output for this AVIF, HEIC, GIF or WebP. */
function estimateOf(bytes: Uint8Array, format: 'avif' | 'heic' | 'gif' | 'webp', output: Output): number {
  const header = readHeader(format, bytes);
  return plan(format, header, bytes.length, { ...output, quality: 80 }, BUDGET).estimate;
}

/**
 * The largest HEIC that is one picture (no grid) the plan admits at the default budget, for a small output:
 * HEIC_SINGLE_PICTURE_MAX_PIXELS (16.3 MP) as 3:4, the photo enlarged by sharp and encoded by heif-enc.
 */
async function largestSingle(source: string): Promise<string> {
  const width = Math.floor(Math.sqrt((HEIC_SINGLE_PICTURE_MAX_PIXELS * 3) / 4) / 8) * 8;
  const height = Math.floor(HEIC_SINGLE_PICTURE_MAX_PIXELS / width);
  const out = join(DIR, `oppo-single-largest-${width}x${height}.heic`);
  if (!existsSync(out)) {
    const png = join(DIR, `oppo-${width}x${height}.png`);
    await sharp(readFileSync(source)).rotate().resize(width, height).png({ compressionLevel: 1 }).toFile(png);
    heifEnc(png, out);
  }
  return out;
}

/** From `start`, the widest 3:4 picture (in steps of 64 pixels) that `admits` at width × height. */
function widest3by4(start: number, admits: (width: number, height: number) => boolean): number {
  let width = start;
  while (admits(width + 64, Math.round(((width + 64) * 4) / 3))) width += 64;
  return width;
}

/**
 * The widest 3:4 grid HEIC (a multiple of 64 wide) the plan admits as PNG at full size: the 48 MP grid's
 * header scaled, its decoder's band of RGBA (as wide as the picture, a tile high) widened with it, the
 * upload by its pixels (a little more than the larger file's: the enlarged photo's detail per pixel falls).
 * Its 512×512 tiles are encoded one by one (about 250 heif-enc runs: minutes).
 */
async function largestGrid(source: string, grid48: string): Promise<string> {
  await heicGrid(source, grid48, 6048, 8064);
  const probe = readFileSync(grid48);
  const header = readHeader('heic', probe);
  const tile = 512;
  const width = widest3by4(header.width, (next, height) => {
    const scaled = {
      ...header,
      width: next,
      height,
      heic: {
        ...header.heic!,
        codedPixels: next * height,
        crop: { x: 0, y: 0, width: next, height },
        decoderBytes: header.heic!.decoderBytes + (next - header.width) * tile * 4,
      },
    };
    const upload = (probe.length * next * height) / (header.width * header.height);
    return plan('heic', scaled, upload, { format: 'png', quality: 80 }, BUDGET).estimate <= BUDGET;
  });
  const height = Math.round((width * 4) / 3);
  const out = join(DIR, `oppo-largest-grid-${width}x${height}.heic`);
  await heicGrid(source, out, width, height);
  return out;
}

/**
 * An animated WebP at the animation limits whose every frame changes: `frames` frames of `width`×`height`
 * panning down the photo (enlarged to twice the height), by sharp at libwebp quality 50, 40 ms a frame: the
 * encoder's side of the limits (each frame encoded whole, the output growing by each; about 7 MB in).
 */
async function pannedWebp(source: string, output: string, width: number, height: number, frames: number) {
  if (existsSync(output)) return;
  const tall = await sharp(readFileSync(source))
    .rotate()
    .resize(width, height * 2, { fit: 'cover' })
    .removeAlpha()
    .raw()
    .toBuffer();
  const all = Buffer.alloc(width * height * 3 * frames);
  for (let i = 0; i < frames; i++) {
    const top = Math.round((height * i) / frames);
    tall.copy(all, i * width * height * 3, top * width * 3, (top + height) * width * 3);
  }
  // pageHeight makes the tall raw picture frames (sharp's raw options accept it; its types do not say so).
  const raw = { width, height: height * frames, channels: 3 as const, pageHeight: height };
  await sharp(all, { raw })
    .webp({ quality: 50, delay: Array(frames).fill(40), loop: 0 })
    .toFile(output);
}

/**
 * An animated GIF at the animation limits: `frames` frames of a `width`×`height` screen (100 × 1 MP: the
 * 100 MP of frames of MAX_ANIM_FRAME_PIXELS), the photo still behind a 120 px square of it (negated) that
 * crosses the screen, as a screen recording or a UI animation moves a part over a still picture. sharp
 * (libvips' cgif) writes each frame as the rectangle that changed, so the file stays under the upload
 * limit (about 4 MB); 40 ms a frame, looping.
 */
async function animatedGif(source: string, output: string, width: number, height: number, frames: number) {
  if (existsSync(output)) return;
  const photo = sharp(readFileSync(source)).rotate();
  const background = await photo.clone().resize(width, height, { fit: 'cover' }).removeAlpha().raw().toBuffer();
  const size = 120;
  const square = await photo.clone().resize(size, size, { fit: 'cover' }).negate().removeAlpha().raw().toBuffer();
  const all = Buffer.alloc(width * height * 3 * frames);
  for (let i = 0; i < frames; i++) {
    const frame = all.subarray(i * width * height * 3, (i + 1) * width * height * 3);
    background.copy(frame);
    const x = Math.round(((width - size) * i) / Math.max(1, frames - 1));
    const y = Math.round((height - size) / 2 + ((height - size) / 3) * Math.sin((2 * Math.PI * i) / frames));
    for (let row = 0; row < size; row++)
      square.copy(frame, ((y + row) * width + x) * 3, row * size * 3, (row + 1) * size * 3);
  }
  // pageHeight makes the tall raw picture frames (sharp's raw options accept it; its types do not say so).
  const raw = { width, height: height * frames, channels: 3 as const, pageHeight: height };
  await sharp(all, { raw })
    .gif({ delay: Array(frames).fill(40), loop: 0, dither: 0, interFrameMaxError: 8 })
    .toFile(output);
}

/** The largest 3:4 picture (a multiple of 8 wide) whose 8-bit 4:2:0 AVIF the plan admits as PNG output. */
async function largestAdmitted(source: string): Promise<string> {
  const probe = readFileSync(join(DIR, 'oppo-420.avif'));
  const header = readHeader('avif', probe);
  const width = widest3by4(3120, (next, height) => {
    const scaled = {
      ...header,
      width: next,
      height,
      avif: { ...header.avif!, decoderBytes: (header.avif!.decoderBytes * next * height) / (3120 * 4160) },
    };
    const upload = probe.length * (next / 3120) ** 2;
    return plan('avif', scaled, upload, { format: 'png', quality: 80 }, BUDGET).estimate <= BUDGET;
  });
  const height = Math.round((width * 4) / 3);
  const out = join(DIR, `oppo-${width}x${height}-420.avif`);
  if (!existsSync(out)) {
    const png = join(DIR, `oppo-${width}.png`);
    await sharp(readFileSync(source)).resize(width, height).png({ compressionLevel: 1 }).toFile(png);
    avifenc(png, out, ['-d', '8', '-y', '420']);
  }
  return out;
}

async function compressOnce(service: Service, input: Uint8Array, output: Output) {
  const form = new FormData();
  form.append('image', new File([input], 'photo'));
  form.append('format', output.format);
  if (output.width) form.append('width', String(output.width));
  const res = await fetch(`${service.base}/api/v1/compress`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.demoKeys.image_pro}` },
    body: form,
    signal: AbortSignal.timeout(300_000),
  });
  return { res, body: new Uint8Array(await res.arrayBuffer()) };
}

function ssimulacra2(reference: string, output: string): number {
  const tool =
    process.env.SSIMULACRA2 ?? spawnSync('bash', [shared('tools/ssimulacra2.sh')], { encoding: 'utf8' }).stdout.trim();
  const run = spawnSync(tool, [reference, output], { encoding: 'utf8' });
  const value = Number.parseFloat(run.stdout);
  if (run.status !== 0 || !Number.isFinite(value)) throw new Error(`ssimulacra2: ${run.stderr}`);
  return value;
}

const median = (values: (number | undefined)[]): number | undefined => {
  const known = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  return known.length ? known[known.length >> 1] : undefined;
};

export async function benchInputs(start: () => Promise<Service>): Promise<InputRun[]> {
  mkdirSync(DIR, { recursive: true });
  avifenc(PHOTO, join(DIR, 'oppo-420.avif'), ['-d', '8', '-y', '420']);
  avifenc(PHOTO, join(DIR, 'oppo-10bit-444.avif'), ['-d', '10', '-y', '444']);
  // BENCH_INPUTS_ONLY=name runs the files whose name contains it.
  const only = process.env.BENCH_INPUTS_ONLY;
  const heic = join(DIR, 'oppo.heic');
  if (!only || heic.includes(only)) heifEnc(PHOTO, heic);
  const grid = join(DIR, 'oppo-grid-3024x4032.heic');
  if (!only || grid.includes(only)) await heicGrid(PHOTO, grid);
  // An iPhone's largest, 48 MP (its 6048×8064 as 12 × 16 tiles): slow to make (192 heif-enc runs).
  const grid48 = join(DIR, 'oppo-grid-6048x8064.heic');
  if (!only || grid48.includes(only)) await heicGrid(PHOTO, grid48, 6048, 8064);
  const gif = join(DIR, 'oppo-3024x4032.gif');
  if (!only || gif.includes(only)) await gifOf(PHOTO, gif);
  const gifLargest = join(DIR, 'oppo-4000x5333.gif');
  if (!only || gifLargest.includes(only)) await largestGif(PHOTO, gifLargest);
  // Slow to make: only when named (`anim` names both animations).
  const slow: string[] = [];
  if (only?.includes('largest-grid')) slow.push(await largestGrid(PHOTO, grid48));
  if (only?.includes('single-largest')) slow.push(await largestSingle(PHOTO));
  const anim = join(DIR, 'oppo-anim-1000x1000-100.gif');
  if (only && anim.includes(only)) {
    await animatedGif(PHOTO, anim, 1000, 1000, 100);
    slow.push(anim);
  }
  const panned = join(DIR, 'oppo-anim-pan-1000x1000-60.webp');
  if (only && panned.includes(only)) {
    await pannedWebp(PHOTO, panned, 1000, 1000, 60);
    slow.push(panned);
  }
  const candidates = [
    join(DIR, 'oppo-420.avif'),
    join(DIR, 'oppo-10bit-444.avif'),
    heic,
    grid,
    grid48,
    gif,
    gifLargest,
    ...slow,
  ];
  // The largest admitted AVIF is slow to make: only when the filter may want it (an AVIF's name).
  const largest =
    only && ['heic', 'grid', 'gif', 'anim', 'single'].some((name) => only.includes(name))
      ? []
      : [await largestAdmitted(PHOTO)];
  const files = [...candidates, ...largest].filter((f) => !only || f.includes(only));
  const runs: InputRun[] = [];
  for (const file of files) {
    const input = new Uint8Array(readFileSync(file));
    const format = formatOf(file);
    const output = outputOf(file);
    const header = readHeader(format, input);
    const run: InputRun = {
      file: file.split('/').pop()!,
      width: header.width,
      height: header.height,
      bytes: input.length,
      status: 0,
      estimateBytes: estimateOf(input, format, output),
    };
    const service = await start();
    try {
      const cold = await withRssPeak(service.pid, () => compressOnce(service, input, output));
      run.status = cold.result.res.status;
      if (run.status !== 200) {
        run.error = new TextDecoder().decode(cold.result.body.subarray(0, 300));
        runs.push(run);
        log(`inputs: ${run.file}: ${run.status} ${run.error}`);
        continue;
      }
      const coldTiming = parseServerTiming(cold.result.res.headers.get('server-timing'));
      run.coldTotalMs = coldTiming.total;
      run.coldDecodeMs = coldTiming.decode;
      run.coldGrowthBytes = cold.rss.maxGrowthBytes;
      const frames = cold.result.res.headers.get('x-frames');
      log(
        `inputs: ${run.file}: cold ${run.coldTotalMs?.toFixed(0)} ms +${mbOf(run.coldGrowthBytes)} MB${frames ? `, X-Frames ${frames}` : ''}`,
      );
      const ours = join(DIR, 'ours.png');
      writeFileSync(ours, cold.result.body);
      const reference = join(DIR, 'reference.png');
      // A GIF's reference is libvips' decode (sharp's): its palette indices to RGB.
      const whole = output.format === 'png' && !output.width;
      if (format === 'gif' && whole) await sharp(file).png().toFile(reference);
      const dec = !whole
        ? { status: 1 }
        : format === 'gif'
          ? { status: 0 }
          : format === 'heic'
            ? spawnSync('heif-convert', [file, reference], { encoding: 'utf8' })
            : spawnSync('avifdec', ['-d', '8', file, reference], { encoding: 'utf8' });
      if (dec.status === 0) run.ssimulacra2 = ssimulacra2(reference, ours);
      const warm: { total?: number; decode?: number; growth?: number }[] = [];
      for (let round = 0; round < WARM_ROUNDS; round++) {
        const { result, rss } = await withRssPeak(service.pid, () => compressOnce(service, input, output));
        const timing = parseServerTiming(result.res.headers.get('server-timing'));
        warm.push({ total: timing.total, decode: timing.decode, growth: rss.maxGrowthBytes });
      }
      run.warmTotalMs = median(warm.map((w) => w.total));
      run.warmDecodeMs = median(warm.map((w) => w.decode));
      run.warmGrowthBytes = median(warm.map((w) => w.growth));
    } finally {
      await service.stop();
    }
    runs.push(run);
    log(
      `inputs: ${run.file} ${run.width}×${run.height}: cold ${run.coldTotalMs?.toFixed(0)} ms +${mbOf(run.coldGrowthBytes)} MB, ` +
        `warm ${run.warmTotalMs?.toFixed(0)} ms +${mbOf(run.warmGrowthBytes)} MB, SSIMULACRA2 ${run.ssimulacra2?.toFixed(2)}`,
    );
  }
  return runs;
}

const fmt = (v: number | undefined, digits = 0) => (v === undefined ? '–' : v.toFixed(digits));

export function inputsReport(runs: InputRun[]): string {
  return [
    'AVIF, HEIC and GIF input → PNG at full size, one request at a time on a fresh service (cold: the first; warm: median of 3): ' +
      "Server-Timing total (decode), workerd peak RSS growth, the plan's estimate; SSIMULACRA2 of our decode against avifdec -d 8 (heif-convert for HEIC, sharp for GIF).",
    '',
    '| file | size | bytes | cold ms (decode) | cold MB | warm ms (decode) | warm MB | estimate MB | SSIMULACRA2 |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...runs.map(
      (r) =>
        `| ${r.file} | ${r.width}×${r.height} | ${r.bytes} | ${r.status === 200 ? `${fmt(r.coldTotalMs)} (${fmt(r.coldDecodeMs)})` : `${r.status}`} | ` +
        `${mbOf(r.coldGrowthBytes)} | ${fmt(r.warmTotalMs)} (${fmt(r.warmDecodeMs)}) | ${mbOf(r.warmGrowthBytes)} | ` +
        `${(r.estimateBytes / 1048576).toFixed(0)} | ${fmt(r.ssimulacra2, 2)} |`,
    ),
  ].join('\n');
}
