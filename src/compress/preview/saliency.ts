// Where a crop should go when the caller does not say (gravity=auto): the box of a given aspect ratio, as
// large as the picture allows, that keeps the most of what draws the eye. Modelled on libvips' `attention`
// strategy (what catches attention is edges, saturated colour and skin), written from that description:
// each preview pixel scores its luminance edges (the Laplacian above a noise floor), its saturation and
// whether its colour is a skin tone, weighted by its alpha; a summed-area table then gives every position
// of the box along the one axis it can move in its score at once. A pure function over a preview
// (preview.ts): the caller scales the box to the source.
import type { RgbaImage } from '../../../wasm/image.ts';

export interface CropBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface SalientCrop {
  /** In the preview's pixels. */
  box: CropBox;
  /**
   * 0–1: how much more of the picture's score the box holds than a box placed anywhere would on a picture
   * scored evenly. 0 for a flat picture (the box is then centred), 1 when everything salient is inside.
   */
  confidence: number;
}

/** Laplacian magnitudes (of 0–255 luminance) up to this are JPEG noise and film grain, not edges. */
export const EDGE_NOISE_FLOOR = 8;
/** Chroma (max − min of R, G, B, 0–1) below this is not colourful enough to draw the eye. */
export const SATURATION_FLOOR = 0.2;
/** What a colourful pixel and a skin-toned one score beside an edge of 255. */
const SATURATION_WEIGHT = 0.5;
const SKIN_WEIGHT = 0.5;
/** A picture whose mean score is below this is flat: nothing to choose by, the box is centred. */
export const FLAT_MEAN_SCORE = 0.002;
/** Positions whose score is within this share of the best count as the best (the centremost is taken). */
const TIE = 1e-6;

const luma = (d: Uint8Array, i: number): number => 0.299 * d[i]! + 0.587 * d[i + 1]! + 0.114 * d[i + 2]!;

/** A widely used RGB skin-tone rule (Kovač et al., daylight), cheap enough for every preview pixel. */
const isSkin = (r: number, g: number, b: number): boolean =>
  r > 95 && g > 40 && b > 20 && r > g && r > b && r - Math.min(g, b) > 15 && r - g > 15;

/** Each pixel's score: edges, saturation and skin, weighted by alpha. */
export function saliencyMap(image: RgbaImage): Float32Array {
  const { data, width: w, height: h } = image;
  const lum = new Float32Array(w * h);
  for (let p = 0; p < w * h; p++) lum[p] = luma(data, p * 4);
  const map = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const p = y * w + x;
      const c = lum[p]!;
      // Edges of the picture repeat their own pixel, so a border is no edge.
      const lap =
        4 * c -
        lum[x > 0 ? p - 1 : p]! -
        lum[x < w - 1 ? p + 1 : p]! -
        lum[y > 0 ? p - w : p]! -
        lum[y < h - 1 ? p + w : p]!;
      const edge = Math.max(0, Math.abs(lap) - EDGE_NOISE_FLOOR) / 255;
      const i = p * 4;
      const r = data[i]!;
      const g = data[i + 1]!;
      const b = data[i + 2]!;
      const chroma = (Math.max(r, g, b) - Math.min(r, g, b)) / 255;
      const colourful = chroma > SATURATION_FLOOR ? chroma * SATURATION_WEIGHT : 0;
      const skin = isSkin(r, g, b) ? SKIN_WEIGHT : 0;
      map[p] = (edge + colourful + skin) * (data[i + 3]! / 255);
    }
  }
  return map;
}

/** The largest box of `aspect` (width ÷ height) inside width × height, at least 1 × 1. */
export function boxSize(width: number, height: number, aspect: number): { width: number; height: number } {
  if (width / height > aspect) return { width: Math.max(1, Math.min(width, Math.round(height * aspect))), height };
  return { width, height: Math.max(1, Math.min(height, Math.round(width / aspect))) };
}

/**
 * The crop of `aspect` (target width ÷ height) that keeps the most salient part of `preview`, with how sure
 * that choice is. The box spans the picture in one axis and moves along the other.
 */
export function salientCrop(preview: RgbaImage, aspect: number): SalientCrop {
  const { width: w, height: h } = preview;
  const size = boxSize(w, h, aspect);
  const horizontal = size.width < w;
  const length = horizontal ? w : h;
  const span = horizontal ? size.width : size.height;
  const centred = Math.floor((length - span) / 2);
  const at = (offset: number): CropBox => (horizontal ? { x: offset, y: 0, ...size } : { x: 0, y: offset, ...size });

  const map = saliencyMap(preview);
  // Scores summed across the axis the box spans, then prefix sums along the one it moves in.
  const line = new Float64Array(length + 1);
  let total = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const s = map[y * w + x]!;
      line[(horizontal ? x : y) + 1]! += s;
      total += s;
    }
  }
  for (let i = 1; i <= length; i++) line[i]! += line[i - 1]!;
  if (total / (w * h) < FLAT_MEAN_SCORE) return { box: at(centred), confidence: 0 };
  if (span === length) return { box: at(0), confidence: 1 };

  let best = -1;
  let bestOffset = centred;
  for (let offset = 0; offset + span <= length; offset++) {
    const score = line[offset + span]! - line[offset]!;
    const tie = Math.abs(score - best) <= TIE * total;
    if ((score > best && !tie) || (tie && Math.abs(offset - centred) < Math.abs(bestOffset - centred))) {
      if (score > best) best = score;
      bestOffset = offset;
    }
  }
  const share = best / total;
  const even = span / length;
  const confidence = Math.max(0, Math.min(1, (share - even) / (1 - even)));
  return { box: at(bestOffset), confidence: Math.round(confidence * 100) / 100 };
}

/**
 * A box found on a preview of `preview` size, in the pixels of the (upright) source of `source` size:
 * scaled, then kept inside the source. The aspect ratio of the result is the box's within a source pixel;
 * a caller that needs it exact fits its own box of that ratio around the returned one's centre.
 */
export function boxInSource(
  box: CropBox,
  preview: { width: number; height: number },
  source: { width: number; height: number },
): CropBox {
  const sx = source.width / preview.width;
  const sy = source.height / preview.height;
  const width = Math.max(1, Math.min(source.width, Math.round(box.width * sx)));
  const height = Math.max(1, Math.min(source.height, Math.round(box.height * sy)));
  const x = Math.max(0, Math.min(source.width - width, Math.round(box.x * sx)));
  const y = Math.max(0, Math.min(source.height - height, Math.round(box.y * sy)));
  return { x, y, width, height };
}
