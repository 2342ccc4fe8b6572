// The dominant colour of a picture: the colour most of its (visible) area has, not its average (a red
// flower on green leaves is green, where the average would be brown). Pixels are sorted into bins of
// DOMINANT_BITS per channel, each counted by its alpha; the fullest bin's mean colour is the answer.

import type { RgbaImage } from '../../../wasm/image.ts';

/** Bits kept per channel when binning: 4 puts shades a JPEG or a gradient step apart in one bin. */
export const DOMINANT_BITS = 4;

const hex = (v: number): string => Math.round(v).toString(16).padStart(2, '0');

/** "#rrggbb", or null when no pixel is visible (a wholly transparent picture has no colour). */
export function dominantColour(image: RgbaImage): string | null {
  const shift = 8 - DOMINANT_BITS;
  const bins = 1 << (3 * DOMINANT_BITS);
  const weight = new Float64Array(bins);
  const sums = new Float64Array(bins * 3);
  const d = image.data;
  for (let i = 0; i < d.length; i += 4) {
    const a = d[i + 3]!;
    if (a === 0) continue;
    const bin =
      ((d[i]! >> shift) << (2 * DOMINANT_BITS)) | ((d[i + 1]! >> shift) << DOMINANT_BITS) | (d[i + 2]! >> shift);
    weight[bin]! += a;
    sums[bin * 3]! += d[i]! * a;
    sums[bin * 3 + 1]! += d[i + 1]! * a;
    sums[bin * 3 + 2]! += d[i + 2]! * a;
  }
  let best = -1;
  for (let b = 0; b < bins; b++) if (weight[b]! > 0 && (best < 0 || weight[b]! > weight[best]!)) best = b;
  if (best < 0) return null;
  const w = weight[best]!;
  return `#${hex(sums[best * 3]! / w)}${hex(sums[best * 3 + 1]! / w)}${hex(sums[best * 3 + 2]! / w)}`;
}
