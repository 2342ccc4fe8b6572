// A gain map through a transformation (trim, fit and its crop, gravity, rotate, flip, pad): the map is a
// sixteenth (Android) to a quarter (iPhone) of the picture's pixels, so it is decoded whole (planGainMap
// counts it), and each of its output pixels is carried back through the picture's geometry (padding, the
// turn and the mirror, the crop, the resize, the EXIF orientation) to the stored map, where it is sampled. The map keeps its resolution relative to
// the picture: a quarter-size map stays a quarter of the output's size. Padding gets the map's neutral
// value (no boost), so a pad stays the flat colour it is in the picture on an HDR screen too. Blur and
// sharpen are not applied to the map: it drives brightness, not detail.
import type { Orientation } from '../exif.ts';
import { swapsAxes } from '../exif.ts';
import type { Size } from '../geometry.ts';
import { backward, type TransformGeometry } from '../transform/geometry.ts';
import type { Flip, Rotation } from '../transform/options.ts';
import type { GainMapImage } from './detect.ts';
import { gainMapMetadata } from './numbers.ts';

/** What the picture went through, beside the map's own size. */
export interface TransformedMap {
  /** The picture's upright source size (after the EXIF orientation). */
  upright: Size;
  geometry: TransformGeometry;
  flip?: Flip;
  rotate: Rotation;
  orientation: Orientation;
  /** The map as stored in the file. */
  stored: Size;
}

/** Output pixels of the map per output pixel of the picture, per axis: the map's size over the source's. */
const ratios = (t: TransformedMap): { x: number; y: number } => {
  const mapUpright = swapsAxes(t.orientation) ? { width: t.stored.height, height: t.stored.width } : t.stored;
  return { x: mapUpright.width / t.upright.width, y: mapUpright.height / t.upright.height };
};

/** The transformed map's size, and its content's place in it (the rest is padding). */
export function transformedMapSize(t: TransformedMap): { output: Size; content: { x: number; y: number } & Size } {
  const r = ratios(t);
  // The picture's axes after a quarter turn are the source's swapped: so are the map's ratios.
  const [rx, ry] = t.rotate === 90 || t.rotate === 270 ? [r.y, r.x] : [r.x, r.y];
  const side = (v: number, k: number) => Math.max(1, Math.round(v * k));
  const output = { width: side(t.geometry.output.width, rx), height: side(t.geometry.output.height, ry) };
  const width = Math.min(output.width, side(t.geometry.content.width, rx));
  const height = Math.min(output.height, side(t.geometry.content.height, ry));
  const x = Math.min(output.width - width, Math.round(t.geometry.padding.left * rx));
  const y = Math.min(output.height - height, Math.round(t.geometry.padding.top * ry));
  return { output, content: { x, y, width, height } };
}

/** An upright point of the map to its stored pixels (the inverse of the EXIF orientation). */
function storedPoint(ux: number, uy: number, w: number, h: number, orientation: Orientation): [number, number] {
  switch (orientation) {
    case 2:
      return [w - 1 - ux, uy];
    case 3:
      return [w - 1 - ux, h - 1 - uy];
    case 4:
      return [ux, h - 1 - uy];
    case 5:
      return [uy, ux];
    case 6:
      return [uy, h - 1 - ux];
    case 7:
      return [w - 1 - uy, h - 1 - ux];
    case 8:
      return [w - 1 - uy, ux];
    default:
      return [ux, uy];
  }
}

/**
 * The map value of no boost (log2 gain 0), from its first channel's parameters; 0 (the least boost)
 * without them. A decoder takes a stored value v to the gain lerp(min, max, v^(1/gamma)) (ISO 21496-1,
 * libultrahdr, libavif), so no boost is stored as ((0 − min) ÷ (max − min))^gamma.
 */
export function neutralValue(map: GainMapImage): number {
  const m = gainMapMetadata(map);
  if (typeof m === 'string') return 0;
  const [min, max, gamma] = [m.gainMapMin[0], m.gainMapMax[0], m.gamma[0]];
  if (max <= min) return 0;
  const recovery = Math.min(1, Math.max(0, (0 - min) / (max - min)));
  return Math.round(255 * recovery ** gamma);
}

/**
 * The map's stored pixels (`channels` per pixel, as decoded) put through the picture's transformation:
 * each output pixel averages a footprint of bilinear samples (several where the map shrinks, so a large
 * shrink does not alias).
 */
export function transformMapPixels(
  pixels: Uint8Array,
  channels: number,
  t: TransformedMap,
  neutral: number,
): { pixels: Uint8Array } & Size {
  const { output, content } = transformedMapSize(t);
  const { geometry: g } = t;
  const sw = t.stored.width;
  const sh = t.stored.height;
  const upright = swapsAxes(t.orientation) ? { width: sh, height: sw } : { width: sw, height: sh };
  // Content pixel (picture units) per map content pixel, and map-upright pixels per resized-picture pixel.
  const kx = g.content.width / content.width;
  const ky = g.content.height / content.height;
  const mx = upright.width / g.resized.width;
  const my = upright.height / g.resized.height;
  const taps = Math.min(8, Math.max(1, Math.ceil(Math.max(kx * mx, ky * my))));
  const out = new Uint8Array(output.width * output.height * channels).fill(neutral);
  const sum = new Float64Array(channels);
  const sample = (x: number, y: number) => {
    const cx = Math.min(sw - 1, Math.max(0, x));
    const cy = Math.min(sh - 1, Math.max(0, y));
    const x0 = Math.floor(cx);
    const y0 = Math.floor(cy);
    const x1 = Math.min(sw - 1, x0 + 1);
    const y1 = Math.min(sh - 1, y0 + 1);
    const fx = cx - x0;
    const fy = cy - y0;
    for (let c = 0; c < channels; c++) {
      const at = (px: number, py: number) => pixels[(py * sw + px) * channels + c]!;
      const top = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * fx;
      const bottom = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * fx;
      sum[c]! += top + (bottom - top) * fy;
    }
  };
  for (let oy = 0; oy < content.height; oy++) {
    for (let ox = 0; ox < content.width; ox++) {
      sum.fill(0);
      for (let ty = 0; ty < taps; ty++) {
        for (let tx = 0; tx < taps; tx++) {
          // A point of the picture's content (after the turn), then before the turn and mirror, in the crop.
          const px = (ox + (tx + 0.5) / taps) * kx - 0.5;
          const py = (oy + (ty + 0.5) / taps) * ky - 0.5;
          const p = backward(px, py, g.crop.width, g.crop.height, t.flip, t.rotate);
          // The resized picture's point, then the map's upright point, then its stored one.
          const ux = (g.crop.x + p.x + 0.5) * mx - 0.5;
          const uy = (g.crop.y + p.y + 0.5) * my - 0.5;
          const [sx, sy] = storedPoint(ux, uy, sw, sh, t.orientation);
          sample(sx, sy);
        }
      }
      const at = ((content.y + oy) * output.width + content.x + ox) * channels;
      for (let c = 0; c < channels; c++) out[at + c] = Math.round(sum[c]! / (taps * taps));
    }
  }
  return { pixels: out, ...output };
}
