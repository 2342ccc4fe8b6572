import { FORMATS, type ImageFormat } from '../compress/formats.ts';
import { DEFAULT_QUALITY, MAX_OUTPUT_DIMENSION, MAX_TARGET_KB } from '../compress/limits.ts';
import { METADATA_MODES, type MetadataMode } from '../compress/metadata.ts';
import { ApiError, badRequestFrom } from '../errors.ts';
import { choiceParam, integerParam, queryObject } from '../params.ts';

export const OUTPUT_CHOICES = [...FORMATS, 'auto'] as const;
export type OutputChoice = (typeof OUTPUT_CHOICES)[number];

/** Longest options segment read, in characters: every parameter at its longest fits many times over. */
export const MAX_OPTIONS_LENGTH = 200;

/** The options as /compress names them: w → width, h → height, q → quality, f → format, m → metadata, kb → target_kb. */
const OptionsSchema = queryObject({
  w: integerParam(1, MAX_OUTPUT_DIMENSION).optional(),
  h: integerParam(1, MAX_OUTPUT_DIMENSION).optional(),
  q: integerParam(1, 100).default(DEFAULT_QUALITY),
  // Absent: the source's format (an image URL stands in for the original, so it keeps its kind).
  f: choiceParam(OUTPUT_CHOICES).optional(),
  m: choiceParam(METADATA_MODES).default('strip'),
  kb: integerParam(1, MAX_TARGET_KB).optional(),
});

export interface ImageOptions {
  width?: number;
  height?: number;
  quality: number;
  /** undefined: the source's format. */
  format?: OutputChoice;
  metadata: MetadataMode;
  targetKb?: number;
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
  return { width: o.w, height: o.h, quality: o.q, format: o.f, metadata: o.m, targetKb: o.kb };
}

/**
 * The negotiated output, known before the source is: an explicit format; `source` (no `f`: the source's
 * format); `fallback` (`f=auto` for a client that does not take WebP: the source's format, a WebP source
 * as JPEG). Part of the cache key, so each variant is stored once.
 */
export type Variant = ImageFormat | 'source' | 'fallback';

export function variantOf(options: ImageOptions, accept: string | null, webpAllowed: boolean): Variant {
  if (options.format === undefined) return 'source';
  if (options.format !== 'auto') return options.format;
  return webpAllowed && acceptsWebp(accept) ? 'webp' : 'fallback';
}

/**
 * Whether an Accept header names image/webp with a non-zero q. Only the explicit type counts: `*\/*` is
 * what every client sends, including ones that cannot show WebP (browsers that can name it).
 */
export function acceptsWebp(accept: string | null): boolean {
  if (!accept) return false;
  return accept.split(',').some((item) => {
    const [type, ...params] = item.split(';').map((p) => p.trim().toLowerCase());
    if (type !== 'image/webp') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** The output format once the source's format is known; WebP only where the tier writes it. */
export function outputFormat(variant: Variant, sourceFormat: ImageFormat, webpAllowed: boolean): ImageFormat {
  if (variant !== 'source' && variant !== 'fallback') return variant;
  return sourceFormat === 'webp' && (variant === 'fallback' || !webpAllowed) ? 'jpeg' : sourceFormat;
}
