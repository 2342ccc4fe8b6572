// `npm run bench -- anim`: animations → animated WebP against sharp's `animated: true` WebP, side by side.
// Inputs are public animated GIFs found in Debian packages on this machine (measured, never committed):
// python3-imageio's `newtonscradle.gif`, and more with BENCH_ANIM_FILES (comma-separated paths). From each
// GIF two more sources are made here: an animated WebP (sharp's, at libwebp 90) and an AVIF image sequence
// (Debian's avifenc over sharp's composed frames, quantiser 10–20, the GIF's frame rate; skipped when
// avifenc is missing). Ours: POST /compress format=webp at quality 80 (libwebp's 85 on the one quality
// scale), pro key. sharp: the same libwebp quality (85) and method (effort 4), one thread; sharp reads
// animated WebP, and reads an AVIF sequence as its first frame only (libheif under libvips), so that row has
// no sharp figures. Both at full size and at width 100. Each output's frames are decoded by sharp and scored
// (SSIM, lib/ssim.ts, on white) against the source's frames as sharp composes them (an AVIF sequence's:
// the PNG frames it was made from); bytes, time (ours the request's wall time, sharp's the pipeline's) and
// the frames.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import sharp from 'sharp';
import './lib/images.ts'; // sharp.cache(false), sharp.concurrency(1)
import type { Service } from './lib/server.ts';
import { ssim, type Rgb } from './lib/ssim.ts';

const DEFAULT_FILES = ['/usr/lib/python3/dist-packages/imageio/resources/images/newtonscradle.gif'];
const OUR_QUALITY = 80;
/** libwebp's quality for our 80 (src/compress/quality-scale.ts), given to sharp too. */
const LIBWEBP_QUALITY = 85;
const WIDTHS: (number | undefined)[] = [undefined, 100];

export interface AnimRow {
  file: string;
  /** The source's format: gif, webp (made from the GIF by sharp) or avif (a sequence made by avifenc). */
  source: 'gif' | 'webp' | 'avif';
  width: number | undefined;
  frames: number;
  ours: { status: number; bytes: number; ms: number; ssim: number; frames: number };
  /** null: sharp cannot read the source's animation. */
  sharp: { bytes: number; ms: number; ssim: number; frames: number } | null;
}

/** Every frame of an animation as RGB on white, at `width` (as sharp composes a GIF's or a WebP's frames). */
async function framesOf(bytes: Uint8Array, width?: number): Promise<Rgb[]> {
  let s = sharp(bytes, { animated: true });
  if (width) s = s.resize({ width });
  const { data, info } = await s
    .flatten({ background: '#ffffff' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const pages = info.pages ?? 1;
  const h = info.pageHeight ?? info.height;
  const size = info.width * h * 3;
  return Array.from({ length: pages }, (_, i) => ({
    width: info.width,
    height: h,
    data: new Uint8Array(data.subarray(i * size, (i + 1) * size)),
  }));
}

async function meanSsim(reference: Rgb[], output: Uint8Array): Promise<{ ssim: number; frames: number }> {
  const got = await framesOf(output);
  const n = Math.min(reference.length, got.length);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += ssim(reference[i]!, got[i]!);
  return { ssim: sum / n, frames: got.length };
}

/** An AVIF sequence of the GIF's frames as sharp composes them (RGB on white), or null without avifenc. */
async function avifSequenceOf(
  gif: Uint8Array,
): Promise<{ avif: Uint8Array; frames: (w?: number) => Promise<Rgb[]> } | null> {
  try {
    execFileSync('avifenc', ['--version'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  const meta = await sharp(gif, { animated: true }).metadata();
  const delays = meta.delay ?? [];
  const full = await framesOf(gif);
  const dir = mkdtempSync(join(tmpdir(), 'anim-bench-'));
  try {
    const args = ['--min', '10', '--max', '20', '-s', '6', '-y', '420', '--timescale', '1000'];
    const pngs: string[] = [];
    for (const [i, frame] of full.entries()) {
      const path = join(dir, `f${String(i).padStart(4, '0')}.png`);
      writeFileSync(
        path,
        await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
          .png()
          .toBuffer(),
      );
      pngs.push(path);
      args.push('--duration', String(Math.max(10, delays[i] ?? 100)), path);
    }
    const out = join(dir, 'seq.avif');
    execFileSync('avifenc', [...args, out], { stdio: 'ignore' });
    const avif = new Uint8Array(readFileSync(out));
    const frames = async (width?: number) =>
      width
        ? Promise.all(
            full.map(async (f) => {
              const { data, info } = await sharp(f.data, { raw: { width: f.width, height: f.height, channels: 3 } })
                .resize({ width })
                .raw()
                .toBuffer({ resolveWithObject: true });
              return { width: info.width, height: info.height, data: new Uint8Array(data) };
            }),
          )
        : full;
    return { avif, frames };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ours(service: Service, bytes: Uint8Array, type: string, name: string, width?: number) {
  const form = new FormData();
  form.set('image', new Blob([bytes], { type }), name);
  form.set('format', 'webp');
  form.set('quality', String(OUR_QUALITY));
  if (width) form.set('width', String(width));
  const t0 = performance.now();
  const res = await fetch(`${service.base}/api/v1/compress`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.demoKeys.image_pro}` },
    body: form,
  });
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, body, ms: performance.now() - t0 };
}

async function sharpWebp(bytes: Uint8Array, width?: number): Promise<{ bytes: Uint8Array; ms: number }> {
  const t1 = performance.now();
  let s = sharp(bytes, { animated: true });
  if (width) s = s.resize({ width });
  const out = new Uint8Array(await s.webp({ quality: LIBWEBP_QUALITY, effort: 4 }).toBuffer());
  return { bytes: out, ms: performance.now() - t1 };
}

export async function benchAnim(service: Service): Promise<AnimRow[]> {
  const files = (process.env.BENCH_ANIM_FILES?.split(',') ?? DEFAULT_FILES).filter((f) => existsSync(f));
  const rows: AnimRow[] = [];
  for (const file of files) {
    const gif = new Uint8Array(readFileSync(file));
    const webp = new Uint8Array(await sharp(gif, { animated: true }).webp({ quality: 90, effort: 4 }).toBuffer());
    const sequence = await avifSequenceOf(gif);
    const sources = [
      { source: 'gif' as const, bytes: gif, type: 'image/gif', reference: (w?: number) => framesOf(gif, w) },
      { source: 'webp' as const, bytes: webp, type: 'image/webp', reference: (w?: number) => framesOf(webp, w) },
      ...(sequence
        ? [{ source: 'avif' as const, bytes: sequence.avif, type: 'image/avif', reference: sequence.frames }]
        : []),
    ];
    for (const { source, bytes, type, reference: referenceAt } of sources) {
      for (const width of WIDTHS) {
        const reference = await referenceAt(width);
        const mine = await ours(service, bytes, type, `${basename(file)}.${source}`, width);
        const scored = mine.status === 200 ? await meanSsim(reference, mine.body) : { ssim: Number.NaN, frames: 0 };
        // sharp reads an AVIF sequence as one frame: no like-for-like figure.
        const theirs = source === 'avif' ? null : await sharpWebp(bytes, width);
        rows.push({
          file: basename(file),
          source,
          width,
          frames: reference.length,
          ours: { status: mine.status, bytes: mine.body.length, ms: mine.ms, ...scored },
          sharp: theirs && { bytes: theirs.bytes.length, ms: theirs.ms, ...(await meanSsim(reference, theirs.bytes)) },
        });
        console.log(
          `anim: ${basename(file)} ${source} (${bytes.length} B) ${width ?? 'full'}: ours ${mine.status} ${mine.body.length} B, sharp ${theirs?.bytes.length ?? '-'} B`,
        );
      }
    }
  }
  return rows;
}

export function animReport(rows: AnimRow[]): string {
  const na = '–';
  return [
    `Animations → animated WebP, ours at quality ${OUR_QUALITY} (libwebp ${LIBWEBP_QUALITY}) and sharp ${sharp.versions.sharp} at libwebp ${LIBWEBP_QUALITY}, effort 4, one thread; SSIM the mean over frames against the source's frames as sharp composes them (an AVIF sequence's: the frames it was made from; sharp reads only its first frame, so no sharp figures).`,
    '',
    '| source | in | width | frames | ours: bytes | SSIM | ms | sharp: bytes | SSIM | ms | bytes ÷ sharp | time ÷ sharp |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.file} | ${r.source} | ${r.width ?? 'full'} | ${r.frames} | ${r.ours.status === 200 ? r.ours.bytes : `**${r.ours.status}**`} | ${r.ours.ssim.toFixed(4)} | ${r.ours.ms.toFixed(0)} | ${r.sharp?.bytes ?? na} | ${r.sharp?.ssim.toFixed(4) ?? na} | ${r.sharp?.ms.toFixed(0) ?? na} | ${r.sharp ? (r.ours.bytes / r.sharp.bytes).toFixed(3) : na} | ${r.sharp ? (r.ours.ms / r.sharp.ms).toFixed(2) : na} |`,
    ),
  ].join('\n');
}
