// SSIM of a compressed image against its input, on R, G and B, implemented here so the score means
// the same for every codec under test (sharp only decodes). Windows are 8×8 at a stride of 4 (as in
// libjpeg's and many codec papers' SSIM tools), computed from 4×4 block sums: one pass over the
// pixels, memory proportional to the width, a few hundred milliseconds for 16 megapixels.
import sharp from 'sharp';

export interface Rgb {
  width: number;
  height: number;
  /** Interleaved R, G, B; no alpha. */
  data: Uint8Array;
}

/**
 * Decodes to 8-bit sRGB the way a viewer shows the image: EXIF orientation applied, alpha flattened
 * onto white (what Shrinkray does for JPEG output, so every output is judged the same way), or onto
 * `background` (black, to judge a translucent image's alpha as well as its colour). With
 * `size`, an image of other dimensions is stretched to it (only a wrong output would need that).
 */
export async function decodeRgb(
  input: Uint8Array,
  size?: { width: number; height: number },
  background = '#ffffff',
): Promise<Rgb> {
  const decode = (resize: boolean) => {
    let img = sharp(input, { limitInputPixels: false }).rotate();
    if (resize && size) img = img.resize(size.width, size.height, { fit: 'fill' });
    return img.flatten({ background }).toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });
  };
  let { data, info } = await decode(false);
  if (size && (info.width !== size.width || info.height !== size.height)) ({ data, info } = await decode(true));
  if (info.channels !== 3) throw new Error(`decoded to ${info.channels} channels, expected 3`);
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;
const B = 4; // block side; a window is 2×2 blocks
const N = 4 * B * B; // pixels per window

/** Mean SSIM over all 8×8 windows (stride 4) and the three channels; 1 for identical images. */
export function ssim(a: Rgb, b: Rgb): number {
  if (a.width !== b.width || a.height !== b.height)
    throw new Error(`ssim: ${a.width}×${a.height} vs ${b.width}×${b.height}`);
  const bw = Math.floor(a.width / B);
  const bh = Math.floor(a.height / B);
  if (bw < 2 || bh < 2) throw new Error('ssim: image smaller than one window');
  // Per block row, per channel: sums of x, y, x², y², xy over each 4×4 block.
  const stride = bw * 3;
  const fresh = () => Array.from({ length: 5 }, () => new Float64Array(stride));
  let prev = fresh();
  let cur = fresh();
  let total = 0;
  let windows = 0;
  const row = a.width * 3;
  for (let by = 0; by < bh; by++) {
    const [sx, sy, sxx, syy, sxy] = cur as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
    for (const s of cur) s.fill(0);
    for (let y = by * B; y < by * B + B; y++) {
      let p = y * row;
      for (let bx = 0; bx < bw; bx++) {
        for (let dx = 0; dx < B; dx++) {
          for (let c = 0; c < 3; c++, p++) {
            const x = a.data[p]!;
            const v = b.data[p]!;
            const k = bx * 3 + c;
            sx[k]! += x;
            sy[k]! += v;
            sxx[k]! += x * x;
            syy[k]! += v * v;
            sxy[k]! += x * v;
          }
        }
      }
    }
    if (by > 0) {
      for (let k = 0; k < stride - 3; k++) {
        // The window at block (by-1, k/3) spans blocks k and k+3 (the next block, same channel) of both rows.
        const sum = (i: number) => prev[i]![k]! + prev[i]![k + 3]! + cur[i]![k]! + cur[i]![k + 3]!;
        const mx = sum(0) / N;
        const my = sum(1) / N;
        const vx = sum(2) / N - mx * mx;
        const vy = sum(3) / N - my * my;
        const cov = sum(4) / N - mx * my;
        total += ((2 * mx * my + C1) * (2 * cov + C2)) / ((mx * mx + my * my + C1) * (vx + vy + C2));
        windows++;
      }
    }
    [prev, cur] = [cur, prev];
  }
  return total / windows;
}

/** SSIM of an encoded output against the input's pixels, decoded at the input's size. */
export async function ssimOf(reference: Rgb, output: Uint8Array): Promise<number> {
  return ssim(reference, await decodeRgb(output, reference));
}

/**
 * Fails loudly when the metric is broken: identical images must score 1, and more noise or a lower
 * JPEG quality must score lower. Runs on a small synthetic image in well under a second.
 */
export async function checkSsim(): Promise<{
  identical: number;
  noise4: number;
  noise16: number;
  jpeg90: number;
  jpeg30: number;
}> {
  const width = 257;
  const height = 193; // not multiples of 4: the edge handling is exercised too
  const base = new Uint8Array(width * height * 3);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++)
        base[(y * width + x) * 3 + c] = 128 + 60 * Math.sin((x + 40 * c) / 17) * Math.cos(y / 23) + 20 * rand();
    }
  }
  const img: Rgb = { width, height, data: base };
  const noisy = (amp: number): Rgb => ({
    width,
    height,
    data: base.map((v) => Math.max(0, Math.min(255, v + amp * 2 * rand()))),
  });
  const raw = { raw: { width, height, channels: 3 as const } };
  const jpeg = async (quality: number) => ssimOf(img, await sharp(base, raw).jpeg({ quality }).toBuffer());
  const scores = {
    identical: ssim(img, { width, height, data: base.slice() }),
    noise4: ssim(img, noisy(4)),
    noise16: ssim(img, noisy(16)),
    jpeg90: await jpeg(90),
    jpeg30: await jpeg(30),
  };
  const ok =
    Math.abs(scores.identical - 1) < 1e-12 &&
    scores.noise4 < 1 &&
    scores.noise16 < scores.noise4 &&
    scores.jpeg30 < scores.jpeg90 &&
    scores.jpeg90 < 1;
  if (!ok) throw new Error(`SSIM self-check failed: ${JSON.stringify(scores)}`);
  return scores;
}

if (import.meta.main) console.log(await checkSsim());
