// The options segment of an image URL: `w=800,h=600,q=75,f=auto`, or `_` for none. The same parameters
// and bounds as POST /api/v1/compress (its zod pieces, src/params.ts), under short names, plus
// `f=auto`. A segment has one spelling per meaning, so one image is one cache entry: each name at most once.
import { canWrite } from '../accounts/entitlements.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import {
  FORMAT_ALIASES,
  FORMAT_ALIASES_HINT,
  FORMAT_CHOICES,
  MEDIA_TYPES,
  type ImageFormat,
  type InputFormat,
} from '../compress/formats.ts';
import { INFO_FORMAT } from '../compress/info/types.ts';
import { keptFormat } from '../compress/request-rules.ts';
import { DEFAULT_QUALITY, MAX_OUTPUT_DIMENSION, MAX_TARGET_KB } from '../compress/limits.ts';
import { METADATA_MODES, type MetadataMode } from '../compress/metadata.ts';
import { ApiError, badRequestFrom } from '../errors.ts';
import { choiceParam, integerParam, queryObject } from '../params.ts';
import { colourHex } from '../compress/transform/colour.ts';
import {
  boxOf,
  brokenTransformRule,
  gravityText,
  transformOf,
  trimText,
  type Transform,
} from '../compress/transform/options.ts';
import {
  blurParam,
  dprParam,
  fitParam,
  flipParam,
  gravityParam,
  hexColourParam,
  rotateParam,
  sharpenParam,
  trimParam,
} from '../compress/transform/params.ts';

/** `f`: a format, `keep`, `auto` (negotiated by Accept), or `json` (the source described, not encoded). */
export const OUTPUT_CHOICES = [...FORMAT_CHOICES, 'auto', INFO_FORMAT] as const;
export type OutputChoice = (typeof OUTPUT_CHOICES)[number];

/** Longest options segment read, in characters: every parameter at its longest fits many times over. */
export const MAX_OPTIONS_LENGTH = 200;

/**
 * The options as /compress names them: w → width, h → height, q → quality, f → format, m → metadata, kb →
 * target_kb, g → gravity, r → rotate, bg → background (hex without #); fit, flip, dpr, trim (its sides
 * joined by `;`, as Cloudflare writes them: commas separate the options), blur and sharpen as they are.
 */
const OptionsSchema = queryObject({
  w: integerParam(1, MAX_OUTPUT_DIMENSION).optional(),
  h: integerParam(1, MAX_OUTPUT_DIMENSION).optional(),
  q: integerParam(1, 100).default(DEFAULT_QUALITY),
  // Absent, or `keep`: the source's format (an image URL stands in for the original, so it keeps its kind).
  f: choiceParam(OUTPUT_CHOICES, { aliases: FORMAT_ALIASES, hint: FORMAT_ALIASES_HINT }).optional(),
  m: choiceParam(METADATA_MODES).default('strip'),
  kb: integerParam(1, MAX_TARGET_KB).optional(),
  fit: fitParam().optional(),
  g: gravityParam().optional(),
  r: rotateParam().optional(),
  flip: flipParam().optional(),
  bg: hexColourParam().optional(),
  dpr: dprParam().optional(),
  trim: trimParam().optional(),
  blur: blurParam().optional(),
  sharpen: sharpenParam().optional(),
  // false: an animated source gives its first frame (true, the default, is not part of the key).
  anim: choiceParam(['true', 'false']).optional(),
});

export interface ImageOptions {
  /** The output box, `dpr` applied: w=200 and w=100,dpr=2 are one image. */
  width?: number;
  height?: number;
  /** Fit, gravity, rotate, flip, background; undefined when only a resize was asked. */
  transform?: Transform;
  quality: number;
  /** undefined: the source's format (`f` left out, or `keep`). */
  format?: Exclude<OutputChoice, 'keep'>;
  metadata: MetadataMode;
  targetKb?: number;
  /** false (`anim=false`): an animated source's first frame only; undefined: animation kept where written. */
  anim?: false;
}

const refused = (message: string): ApiError => new ApiError('bad_request', `options: ${message}`, { param: 'options' });

export function parseOptions(segment: string): ImageOptions {
  if (segment.length > MAX_OPTIONS_LENGTH) throw refused(`at most ${MAX_OPTIONS_LENGTH} characters`);
  const raw: Record<string, string> = {};
  if (segment !== '_') {
    for (const pair of segment.split(',')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw refused(`"${pair}" is not name=value (e.g. w=800,q=75,f=auto; _ for none)`);
      const name = pair.slice(0, eq);
      if (Object.hasOwn(raw, name)) throw refused(`${name} is given twice`);
      raw[name] = pair.slice(eq + 1);
    }
  }
  const parsed = OptionsSchema.safeParse(raw);
  if (!parsed.success) {
    const err = badRequestFrom(parsed.error.issues);
    throw refused(err.message);
  }
  const o = parsed.data;
  const transform = {
    fit: o.fit,
    gravity: o.g,
    rotate: o.r,
    flip: o.flip,
    background: o.bg,
    dpr: o.dpr,
    trim: o.trim,
    blur: o.blur,
    sharpen: o.sharpen,
  };
  const broken = brokenTransformRule(
    { width: o.w, height: o.h, ...transform },
    { width: 'w', height: 'h', gravity: 'g' },
  );
  if (broken) throw refused(broken.message);
  // `keep` is the default spelled out: one meaning, one cache entry.
  const format = o.f === 'keep' ? undefined : o.f;
  return {
    ...boxOf({ width: o.w, height: o.h, dpr: o.dpr }),
    transform: transformOf(transform),
    quality: o.q,
    format,
    metadata: o.m,
    targetKb: o.kb,
    ...(o.anim === 'false' ? { anim: false as const } : {}),
  };
}

/**
 * A transformation in the cache key: every option in one order, defaults filled in. trim, blur and sharpen
 * follow only when given, so the keys of the transformations made before them stay as they were.
 */
export function transformKey(t: Transform): string {
  const base = [t.fit, gravityText(t.gravity), t.rotate, t.flip ?? '', t.background ? colourHex(t.background) : ''];
  const filters = [t.trim === undefined ? '' : trimText(t.trim), t.blur ?? '', t.sharpen ?? ''];
  return [...base, ...(filters.some((f) => f !== '') ? filters : [])].join('|');
}

/**
 * The negotiated output, known before the source is: an explicit format; `source` (no `f`: the source's
 * format); `fallback` (`f=auto` for a client that takes neither AVIF nor WebP: the source's format, a
 * WebP source as JPEG). Part of the cache key, so each variant is stored once.
 */
export type Variant = ImageFormat | 'source' | 'fallback' | typeof INFO_FORMAT;

/**
 * `f=auto`: JPEG XL when the client names it, else AVIF, else WebP, among the formats the tier writes.
 */
export function variantOf(options: ImageOptions, accept: string | null, tier: ImageTier): Variant {
  if (options.format === undefined) return 'source';
  if (options.format !== 'auto') return options.format;
  for (const format of ['jxl', 'avif', 'webp'] as const) {
    if (canWrite({ image: tier }, format) && accepts(accept, MEDIA_TYPES[format])) return format;
  }
  return 'fallback';
}

/**
 * Whether an Accept header names `mediaType` with a non-zero q. Only the explicit type counts: `*\/*` and
 * `image/*` are what every client sends, including ones that cannot show AVIF or WebP (browsers that can
 * name them).
 */
export function accepts(accept: string | null, mediaType: string): boolean {
  if (!accept) return false;
  return accept.split(',').some((item) => {
    const [type, ...params] = item.split(';').map((p) => p.trim().toLowerCase());
    if (type !== mediaType) return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * The output format once the source's format is known; WebP only where the tier writes it. An animated
 * source (`animated`: an animated GIF or WebP, an AVIF sequence; anim not false) is WebP, animated,
 * without `f` and with `f=auto` when the variant is AVIF or JPEG XL (animations are never sent as either:
 * every client that reads them reads WebP);
 * an explicit format is kept, as is `fallback` (a client that takes neither).
 */
export function outputFormat(
  variant: Exclude<Variant, typeof INFO_FORMAT>,
  sourceFormat: InputFormat,
  webpAllowed: boolean,
  animated: { source: boolean; auto: boolean } = { source: false, auto: false },
): ImageFormat {
  if (
    animated.source &&
    webpAllowed &&
    (variant === 'source' || (animated.auto && (variant === 'avif' || variant === 'jxl')))
  )
    return 'webp';
  if (variant !== 'source' && variant !== 'fallback') return variant;
  return keptFormat(sourceFormat, variant === 'source' && webpAllowed);
}
