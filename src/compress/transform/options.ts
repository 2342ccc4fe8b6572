// The transformation options (Cloudflare Images' names, issue 48) as plain values: what each door
// (POST /compress, signed image URLs) parses its spelling into, and the rules between them, checked
// once here whichever door a request came in by.
import { MAX_OUTPUT_DIMENSION } from '../limits.ts';
import type { Rgba } from './colour.ts';

export const FIT_MODES = ['scale-down', 'contain', 'cover', 'crop', 'pad', 'squeeze'] as const;
export type FitMode = (typeof FIT_MODES)[number];

/** Named gravities: the box's sides and corners. */
export const GRAVITY_NAMES = [
  'center',
  'top',
  'bottom',
  'left',
  'right',
  'top-left',
  'top-right',
  'bottom-left',
  'bottom-right',
] as const;
export type GravityName = (typeof GRAVITY_NAMES)[number];
/**
 * Smart crop: the crop goes where the picture's saliency is (smart-crop.ts). Until the preview has been
 * looked at, geometry places it as `center` (no name matches a side), which is also where it falls back.
 */
export const AUTO_GRAVITY = 'auto';
/**
 * Faces: the crop keeps the faces a detector finds on the preview (smart-crop.ts), or, with none, is
 * placed as `auto`. Placed as `center` until then, like `auto`.
 */
export const FACE_GRAVITY = 'face';
/** A named side or corner, `auto`, `face`, or a focal point (0–1 on each axis of the output's picture). */
export type Gravity = GravityName | typeof AUTO_GRAVITY | typeof FACE_GRAVITY | { x: number; y: number };

export const ROTATIONS = [90, 180, 270] as const;
export type Rotation = 0 | (typeof ROTATIONS)[number];

export const FLIPS = ['h', 'v', 'hv'] as const;
export type Flip = (typeof FLIPS)[number];

/** `dpr` bounds: it multiplies `width` and `height` (a 2× screen asks for twice the pixels). */
export const MIN_DPR = 1;
export const MAX_DPR = 4;

/**
 * `blur` (Cloudflare's scale, 1–250): a Gaussian of standard deviation blur × BLUR_SIGMA_PER_STEP output
 * pixels, so `blur` reads as a radius of about two sigmas; at 20 (sigma 10) fine detail is gone.
 */
export const MIN_BLUR = 1;
export const MAX_BLUR = 250;
export const BLUR_SIGMA_PER_STEP = 0.5;
/**
 * `sharpen` (Cloudflare's scale, 0–10; 0 is none): an unsharp mask of the luminance, adding
 * sharpen × SHARPEN_AMOUNT_PER_STEP times the detail a Gaussian of SHARPEN_SIGMA takes away (libvips'
 * sharpen without its thresholds); at 3 edges are visibly crisper, at 10 they ring.
 */
export const MIN_SHARPEN = 0;
export const MAX_SHARPEN = 10;
export const SHARPEN_AMOUNT_PER_STEP = 0.5;
export const SHARPEN_SIGMA = 1;

/** Pixels cut from each side of the upright source before anything else (`trim=top;right;bottom;left`). */
export interface TrimSides {
  top: number;
  right: number;
  bottom: number;
  left: number;
}
/** `border`: the uniform border found in the image (its colour from the top-left corner, as sharp's trim). */
export const TRIM_BORDER = 'border';
/** The most a side of `trim=top;right;bottom;left` may name: JPEG's and WebP's longest side is shorter. */
export const MAX_TRIM_SIDE = 65_535;
export type Trim = typeof TRIM_BORDER | TrimSides;
/**
 * How far (0–255, on any channel) a pixel may differ from the border's colour and still be border: JPEG
 * noise around a flat border stays under it (sharp's trim threshold is 10 too).
 */
export const TRIM_BORDER_TOLERANCE = 10;

/** Fits that fill a box of their own and so need both of its sides. */
export const BOX_FITS: readonly FitMode[] = ['cover', 'crop', 'pad', 'squeeze'];

/** Pad's fill and what transparency becomes in a JPEG when `background` is left out. */
export const DEFAULT_BACKGROUND: Rgba = [255, 255, 255, 255];

export interface Transform {
  fit: FitMode;
  gravity: Gravity;
  rotate: Rotation;
  flip?: Flip;
  /** Given by the caller (undefined: DEFAULT_BACKGROUND). */
  background?: Rgba;
  trim?: Trim;
  /** 1–250: filters.ts makes it a Gaussian. */
  blur?: number;
  /** 0–10 (left out when 0): filters.ts makes it an unsharp mask. */
  sharpen?: number;
}

/** A request's transformation options, as a door parsed them (every field optional). */
export interface TransformOptions {
  fit?: FitMode;
  gravity?: Gravity;
  rotate?: Rotation;
  flip?: Flip;
  background?: Rgba;
  dpr?: number;
  trim?: Trim;
  blur?: number;
  sharpen?: number;
}

/**
 * Whether anything but a resize was asked: only then do the transform paths run, and only then is the
 * never-bigger rule off (a transformed image is always the transformed image).
 */
export function transforms(t: TransformOptions): boolean {
  return (
    (t.fit !== undefined && t.fit !== 'scale-down') ||
    (t.rotate !== undefined && t.rotate !== 0) ||
    t.flip !== undefined ||
    t.background !== undefined ||
    t.trim !== undefined ||
    t.blur !== undefined ||
    (t.sharpen !== undefined && t.sharpen > 0)
  );
}

/** The transformation the pipeline runs, or undefined when only a resize (or nothing) was asked. */
export function transformOf(t: TransformOptions): Transform | undefined {
  if (!transforms(t)) return undefined;
  return {
    fit: t.fit ?? 'scale-down',
    gravity: t.gravity ?? 'center',
    rotate: t.rotate ?? 0,
    flip: t.flip,
    background: t.background,
    ...(t.trim === undefined ? {} : { trim: t.trim }),
    ...(t.blur === undefined ? {} : { blur: t.blur }),
    ...(t.sharpen ? { sharpen: t.sharpen } : {}),
  };
}

/** The trim as headers and cache keys spell it: `border`, or `top;right;bottom;left`. */
export const trimText = (t: Trim): string => (typeof t === 'string' ? t : `${t.top};${t.right};${t.bottom};${t.left}`);

/** `XxY` as a focal point, each 0–1; null when it is not one. */
export function focalPoint(value: string): { x: number; y: number } | null {
  const match = /^(\d+(?:\.\d+)?|\.\d+)x(\d+(?:\.\d+)?|\.\d+)$/i.exec(value);
  if (!match) return null;
  const [x, y] = [Number(match[1]), Number(match[2])];
  return x <= 1 && y <= 1 ? { x, y } : null;
}

/** The gravity as headers and cache keys spell it: a name, or `XxY`. */
export const gravityText = (g: Gravity): string => (typeof g === 'string' ? g : `${g.x}x${g.y}`);

export type TransformField = 'fit' | 'gravity' | 'dpr' | 'width' | 'height';

export interface TransformRuleBroken {
  field: TransformField;
  message: string;
}

/**
 * The first rule between the size and the transformation that a request breaks, or null; `names` gives a
 * door's own spelling (an image URL says `w`, `h`, `g`). `width`/`height` are before `dpr` multiplies them.
 */
export function brokenTransformRule(
  r: { width?: number; height?: number } & TransformOptions,
  names: Partial<Record<TransformField, string>> = {},
): TransformRuleBroken | null {
  const name = (f: TransformField) => names[f] ?? f;
  if (r.fit !== undefined && BOX_FITS.includes(r.fit) && (r.width === undefined || r.height === undefined)) {
    const missing: TransformField = r.width === undefined ? 'width' : 'height';
    return {
      field: missing,
      message: `${name('fit')}=${r.fit} needs both ${name('width')} and ${name('height')}: it fills a box of its own`,
    };
  }
  const dpr = r.dpr ?? 1;
  for (const side of ['width', 'height'] as const) {
    const value = r[side];
    if (value !== undefined && Math.round(value * dpr) > MAX_OUTPUT_DIMENSION)
      return {
        field: 'dpr',
        message: `${name('dpr')}=${dpr} makes ${name(side)} ${Math.round(value * dpr)}, more than ${MAX_OUTPUT_DIMENSION}: ask for a smaller ${name(side)} or ${name('dpr')}`,
      };
  }
  return null;
}

/** The box in output pixels: `width` and `height` multiplied by `dpr`. */
export function boxOf(r: { width?: number; height?: number; dpr?: number }): { width?: number; height?: number } {
  const dpr = r.dpr ?? 1;
  return {
    width: r.width === undefined ? undefined : Math.round(r.width * dpr),
    height: r.height === undefined ? undefined : Math.round(r.height * dpr),
  };
}

/**
 * X-Crop-Box and X-Gravity for a crop (x,y,w,h in upright source pixels), and X-Crop-Confidence (two
 * decimals) when gravity=auto chose it: one spelling for every door.
 */
export function cropHeaders(crop: {
  box: { x: number; y: number; width: number; height: number };
  gravity: string;
  confidence?: number;
}): { 'X-Crop-Box': string; 'X-Gravity': string; 'X-Crop-Confidence'?: string } {
  const { x, y, width, height } = crop.box;
  return {
    'X-Crop-Box': `${x},${y},${width},${height}`,
    'X-Gravity': crop.gravity,
    ...(crop.confidence === undefined ? {} : { 'X-Crop-Confidence': crop.confidence.toFixed(2) }),
  };
}

/** Why a transformation is too large whatever the memory, and the box that fits instead. */
export interface Oversize {
  /** `output`: an output side past MAX_OUTPUT_DIMENSION; `resized`: the image enlarged past it before the crop. */
  reason: 'output' | 'resized';
  field: 'width' | 'height';
  fits: { width?: number; height?: number };
}

/**
 * A transformation that would make a side longer than MAX_OUTPUT_DIMENSION: an output side (`contain`
 * given one side of a long, thin image), or the image enlarged past it and past its own size before a crop
 * (`cover` of a thin image into a square: hundreds of megapixels resampled to keep a few); null when it fits.
 */
export function oversize(
  g: { resized: { width: number; height: number }; output: { width: number; height: number } },
  upright: { width: number; height: number },
  box: { width?: number; height?: number },
): Oversize | null {
  const enlarged = (side: 'width' | 'height') =>
    g.resized[side] > Math.max(MAX_OUTPUT_DIMENSION, upright[side]) ? g.resized[side] : 0;
  const longestResized = Math.max(enlarged('width'), enlarged('height'));
  const longestOutput = Math.max(g.output.width, g.output.height);
  if (longestResized === 0 && longestOutput <= MAX_OUTPUT_DIMENSION) return null;
  // An output too long says so first: that is what the caller sees.
  const reason = longestOutput > MAX_OUTPUT_DIMENSION ? 'output' : 'resized';
  const scale = MAX_OUTPUT_DIMENSION / (reason === 'resized' ? longestResized : longestOutput);
  const scaled = (v: number | undefined) => (v === undefined ? undefined : Math.max(1, Math.floor(v * scale)));
  return {
    reason,
    field: box.width !== undefined ? 'width' : 'height',
    fits: { width: scaled(box.width), height: scaled(box.height) },
  };
}
