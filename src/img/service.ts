// One signed image URL, from path to bytes: verify the signature (403, free), parse the options, check the
// source URL, then the cache (a hit is free); on a miss reserve one compression of the account's month,
// fetch the source, run the pipeline (prepare → memory gate → compress), and commit the unit only when the
// image is made. Every failure after the reservation releases it, as POST /compress does.
import { can } from '../accounts/entitlements.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import { requireFormat } from '../compress/entitlement.ts';
import type { CompressConfig } from '../compress/config.ts';
import { MEDIA_TYPES, sniff } from '../compress/formats.ts';
import { compressMetered, type CompressionInput, type UnitMeter } from '../compress/service.ts';
import { brokenInfoRule } from '../compress/info/rules.ts';
import { INFO_FORMAT } from '../compress/info/types.ts';
import { brokenRule } from '../compress/request-rules.ts';
import { cropHeaders } from '../compress/transform/options.ts';
import type { AccountMeter } from '../metering/account-meter.ts';
import { enforce } from '../metering/enforce.ts';
import { ApiError } from '../errors.ts';
import type { RateHeaders } from '../metering/types.ts';
import { signingAccount } from '../signing/secrets.ts';
import { imageCacheKey, strongEtag, type ImageCache, type StoredImage } from './cache.ts';
import { readHeader } from '../compress/header.ts';
import { animationFrames } from '../compress/memory-plan.ts';
import type { InputFormat } from '../compress/formats.ts';
import { outputFormat, parseOptions, variantOf, type ImageOptions } from './options.ts';
import { verify } from './signature.ts';
import { fetchSource, sourceUrl, type SourcePolicy } from './source.ts';

export interface ImagePath {
  accountId: string;
  signature: string;
  options: string;
  source: string;
}

export interface ImageContext {
  db: D1Database;
  meter: (accountId: string) => DurableObjectStub<AccountMeter>;
  now: number;
  policy: SourcePolicy;
  compress: CompressConfig;
  /** Where made images are kept (src/img/cache.ts). */
  cache: ImageCache;
  accept: string | null;
  /** The X-RateLimit-* headers of the answer (misses only: a hit spends nothing). */
  onRate: (rate: RateHeaders) => void;
  defer: (work: Promise<unknown>) => void;
}

export type ImageOutcome = { cache: 'HIT'; response: Response } | { cache: 'MISS'; image: StoredImage };

// One message whatever was wrong, so the answer tells nothing about which accounts or secrets exist.
const forbidden = (): ApiError =>
  new ApiError('forbidden', "the signature does not match this URL under any of the account's signing secrets", {
    param: 'signature',
  });

export async function signedImage(path: ImagePath, ctx: ImageContext): Promise<ImageOutcome> {
  const account = await signingAccount(ctx.db, path.accountId);
  if (!account || !(await verify(account.secrets, path.options, path.source, path.signature))) throw forbidden();
  const webp = can({ image: account.imageTier }, 'webp');
  const options = parseOptions(path.options);
  if (options.format === INFO_FORMAT) {
    const t = options.transform;
    const given = {
      width: options.width,
      height: options.height,
      target_kb: options.targetKb,
      fit: t && t.fit !== 'scale-down' ? t.fit : undefined,
      rotate: t?.rotate || undefined,
      flip: t?.flip,
      background: t?.background,
      trim: t?.trim,
      blur: t?.blur,
      sharpen: t?.sharpen,
    };
    const names = { format: 'f=json', width: 'w', height: 'h', target_kb: 'kb', rotate: 'r', background: 'bg' };
    const broken = brokenInfoRule(given, names);
    if (broken) throw new ApiError('bad_request', `options: ${broken.message}`, { param: 'options' });
  } else if (options.format !== undefined && options.format !== 'auto')
    requireFormat(account.imageTier, options.format, 'options', ' (f=auto serves them)');
  if (options.targetKb !== undefined && !can({ image: account.imageTier }, 'target_kb'))
    throw new ApiError('plan_upgrade_required', 'kb (target_kb) needs the pro tier', { param: 'options' });
  // The account's hosts bind the source and every redirect it takes.
  const policy: SourcePolicy = { ...ctx.policy, allowedHosts: account.allowedHosts };
  const url = sourceUrl(path.source, policy);
  const variant = variantOf(options, ctx.accept, account.imageTier);
  // From the parsed options and URL, so every spelling of one image (%3D for =, another option order, a
  // default written out, another Host, another secret's signature) is one entry and one charge.
  const key = await imageCacheKey({ accountId: path.accountId, source: url.href, options, variant, webp });
  const hit = await ctx.cache.lookup(key, ctx.now);
  if (hit) return { cache: 'HIT', response: hit };

  // Requests for the same image that arrive while it is being made wait for it instead of making (and
  // paying for) it again: one fetch, one compression, one unit, however many edges ask at once.
  const pending = inFlight.get(key);
  if (pending) return { cache: 'MISS', image: await pending };
  const making = meteredCompression(account.imageTier, path.accountId, ctx, async () => {
    const bytes = await fetchSource(url, policy);
    if (variant === INFO_FORMAT) return { request: { format: INFO_FORMAT, bytes, metadata: options.metadata } };
    const sourceFormat = sniff(bytes).format;
    // An unreadable source gets the pipeline's own 415; the format asked for does not matter then.
    const animated = {
      // As memory-plan.ts's animates: a size target writes the first frame (and here a transformation too).
      source:
        sourceFormat !== null &&
        options.anim !== false &&
        options.transform === undefined &&
        options.targetKb === undefined &&
        isAnimated(bytes, sourceFormat),
      auto: options.format === 'auto',
    };
    const format = sourceFormat === null ? 'jpeg' : outputFormat(variant, sourceFormat, webp, animated);
    return requestOf(bytes, format, options);
  });
  inFlight.set(key, making);
  try {
    const image = await making;
    ctx.defer(
      ctx.cache
        .store(key, image, ctx.now)
        .catch((err: unknown) => console.error('image cache put failed', String(err))),
    );
    return { cache: 'MISS', image };
  } finally {
    inFlight.delete(key);
  }
}

/**
 * Whether the source is an animation (an animated GIF or WebP, an AVIF sequence), from its structure; a
 * broken one: false, and the pipeline refuses it.
 */
function isAnimated(bytes: Uint8Array, format: InputFormat): boolean {
  if (format !== 'gif' && format !== 'webp' && format !== 'avif') return false;
  try {
    return animationFrames(format, readHeader(format, bytes)) > 1;
  } catch {
    return false;
  }
}

/** Images being made in this isolate, by cache key. */
const inFlight = new Map<string, Promise<StoredImage>>();

/**
 * One unit of the account's month around the work, by the compression use case (src/compress/service.ts):
 * reserved first (429 when none is left), spent before the image is answered, released on failure. A
 * refused source is not counted towards any key's failed compressions (FAILED_COMPRESSIONS_PER_MINUTE):
 * its bytes come from the source host, not from the visitor who asked, and counting them would let
 * anyone holding one signed URL of a broken source image shut the owner's API key out; what a refused
 * image costs is bounded per request instead.
 */
async function meteredCompression(
  imageTier: ImageTier,
  accountId: string,
  ctx: ImageContext,
  read: () => Promise<CompressionInput>,
): Promise<StoredImage> {
  const meter = ctx.meter(accountId);
  const id = crypto.randomUUID();
  const reserved = await meter.reserve(imageTier, ctx.now, id);
  ctx.onRate(reserved.rate);
  if (!reserved.allowed) enforce({ outcome: 'quota_exceeded', rate: reserved.rate });
  const unit: UnitMeter = {
    commit: async () => {
      const committed = await meter.commit(imageTier, id, ctx.now);
      if (!committed.charged) enforce({ outcome: 'quota_exceeded', rate: committed.rate });
    },
    release: async () => ctx.onRate((await meter.release(imageTier, id, ctx.now)).rate),
  };
  const { result } = await compressMetered(unit, imageTier, ctx.compress, read);
  if ('info' in result) {
    const bytes = new TextEncoder().encode(JSON.stringify(result.info));
    return { bytes, contentType: 'application/json; charset=utf-8', etag: await strongEtag(bytes) };
  }
  const image: StoredImage = {
    bytes: result.bytes,
    contentType: MEDIA_TYPES[result.format],
    etag: await strongEtag(result.bytes),
  };
  if (result.crop) {
    const headers = cropHeaders(result.crop);
    image.crop = { box: headers['X-Crop-Box'], gravity: headers['X-Gravity'] };
    if (headers['X-Crop-Confidence'] !== undefined) image.crop.confidence = headers['X-Crop-Confidence'];
  }
  if (result.gainMap) image.gainMap = result.gainMap;
  return image;
}

/** The pipeline's request for a source image and its options (400 for a broken rule between them). */
function requestOf(bytes: Uint8Array, format: keyof typeof MEDIA_TYPES, options: ImageOptions): CompressionInput {
  const broken = brokenRule({ format, targetKb: options.targetKb }, { target_kb: 'kb' });
  if (broken) throw new ApiError('bad_request', `options: ${broken.message}`, { param: 'options' });
  return {
    request: {
      bytes,
      format,
      quality: options.quality,
      width: options.width,
      height: options.height,
      targetKb: options.targetKb,
      metadata: options.metadata,
      transform: options.transform,
      anim: options.anim,
    },
  };
}
