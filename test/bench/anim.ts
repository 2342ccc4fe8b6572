// `npm run bench -- anim`: animated GIF → animated WebP against sharp's `animated: true` WebP, side by side.
// Inputs are public animated GIFs found in Debian packages on this machine (measured, never committed):
// python3-imageio's `newtonscradle.gif`, and more with BENCH_ANIM_FILES (comma-separated paths). Ours:
// POST /compress format=webp at quality 80 (libwebp's 85 on the one quality scale), pro key. sharp: the same
// libwebp quality (85) and method (effort 4), one thread. Both at full size and at width 100. Each
// output's frames are decoded by sharp and scored (SSIM, lib/ssim.ts, on white) against the GIF's frames as
// sharp composes them; bytes, time (ours the request's wall time, sharp's the pipeline's) and the frames.
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
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
  width: number | undefined;
  frames: number;
  ours: { status: number; bytes: number; ms: number; ssim: number; frames: number };
  sharp: { bytes: number; ms: number; ssim: number; frames: number };
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

export async function benchAnim(service: Service): Promise<AnimRow[]> {
  const files = (process.env.BENCH_ANIM_FILES?.split(',') ?? DEFAULT_FILES).filter((f) => existsSync(f));
  const rows: AnimRow[] = [];
  for (const file of files) {
    const gif = new Uint8Array(readFileSync(file));
    for (const width of WIDTHS) {
      const reference = await framesOf(gif, width);
      const form = new FormData();
      form.set('image', new Blob([gif], { type: 'image/gif' }), basename(file));
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
      const ms = performance.now() - t0;
      const ours = res.status === 200 ? await meanSsim(reference, body) : { ssim: Number.NaN, frames: 0 };
      const t1 = performance.now();
      let s = sharp(gif, { animated: true });
      if (width) s = s.resize({ width });
      const theirs = new Uint8Array(await s.webp({ quality: LIBWEBP_QUALITY, effort: 4 }).toBuffer());
      const sharpMs = performance.now() - t1;
      rows.push({
        file: basename(file),
        width,
        frames: reference.length,
        ours: { status: res.status, bytes: body.length, ms, ...ours },
        sharp: { bytes: theirs.length, ms: sharpMs, ...(await meanSsim(reference, theirs)) },
      });
      console.log(
        `anim: ${basename(file)} ${width ?? 'full'}: ours ${res.status} ${body.length} B, sharp ${theirs.length} B`,
      );
    }
  }
  return rows;
}

export function animReport(rows: AnimRow[]): string {
  return [
    `Animated GIF → animated WebP, ours at quality ${OUR_QUALITY} (libwebp ${LIBWEBP_QUALITY}) and sharp ${sharp.versions.sharp} at libwebp ${LIBWEBP_QUALITY}, effort 4, one thread; SSIM the mean over frames against the GIF's frames as sharp composes them.`,
    '',
    '| GIF | width | frames | ours: bytes | SSIM | ms | sharp: bytes | SSIM | ms | bytes ÷ sharp | time ÷ sharp |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.file} | ${r.width ?? 'full'} | ${r.frames} | ${r.ours.status === 200 ? r.ours.bytes : `**${r.ours.status}**`} | ${r.ours.ssim.toFixed(4)} | ${r.ours.ms.toFixed(0)} | ${r.sharp.bytes} | ${r.sharp.ssim.toFixed(4)} | ${r.sharp.ms.toFixed(0)} | ${(r.ours.bytes / r.sharp.bytes).toFixed(3)} | ${(r.ours.ms / r.sharp.ms).toFixed(2)} |`,
    ),
  ].join('\n');
}
