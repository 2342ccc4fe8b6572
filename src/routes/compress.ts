// Image API: POST /api/v1/compress. Thin: reserve a unit of the account's month (through the key's meter), then hand the
// compression use case (src/compress/service.ts) a reader of the upload (parts validated, tier rules checked) and the meter's
// commit and release, and write the image with its headers. The unit is spent only before a 200 and given back on every
// failure, so a failed request never costs quota; an image refused once read (415, 422) counts against the key's
// FAILED_COMPRESSIONS_PER_MINUTE instead.
import { can, canWrite } from '../accounts/entitlements.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { compressConfig } from '../compress/config.ts';
import { EXTENSIONS, MEDIA_TYPES, sniff, type ImageFormat, type InputFormat } from '../compress/formats.ts';
import { requireFormat } from '../compress/entitlement.ts';
import { brokenRule, chosenFormat } from '../compress/request-rules.ts';
import type { CompressRequest, CompressResult } from '../compress/types.ts';
import { compressMetered, type UnitMeter } from '../compress/service.ts';
import type { KeyMeter } from '../metering/key-meter.ts';
import { imageBytes, partsOf, readMultipart } from '../compress/upload.ts';
import { imageKeyFrom, meterFor } from '../http/auth.ts';
import { enforce } from '../metering/enforce.ts';
import type { AppEnv } from '../http/context.ts';
import { ApiError, badRequestFrom } from '../errors.ts';
import { clock } from '../env.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import { CompressParts } from './compress-schema.ts';
import { compressDoc } from './compress-doc.ts';

export const COMPRESS_PATH = '/api/v1/compress';

export function registerCompress(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath(compressDoc);
  app.post(COMPRESS_PATH, async (c) => {
    const { hash, meter } = await meterFor(c.env, imageKeyFrom(c.req.raw.headers), c.req.raw);
    return compressUpload(c, hash, meter);
  });
}

/**
 * The compression itself, metered by the given key's Durable Object: reserve a unit, then the use case
 * (src/compress/service.ts) reads and validates the upload, plans, admits and compresses it. Shared by the
 * API and the console's "Try it" page.
 */
export async function compressUpload(
  c: Context<AppEnv>,
  hash: string,
  meter: DurableObjectStub<KeyMeter>,
): Promise<Response> {
  const started = performance.now();
  const reserved = await meter.reserve(hash, clock(c.env));
  if (reserved.outcome !== 'forbidden') c.set('rate', reserved.rate);
  enforce(reserved);
  const key = reserved.key!;
  c.set('key', key);
  c.set('keyHash', hash);

  const unit: UnitMeter = {
    // A reservation that outlived RESERVATION_TTL_MS while the month filled is refused here. The
    // reservation held the unit, so the headers from reserving stay exact on a 200.
    commit: async () => {
      const committed = await meter.commit(hash, reserved.reservation!, clock(c.env));
      if (committed.outcome !== 'quota_exceeded') return;
      if (committed.rate) c.set('rate', committed.rate);
      enforce(committed);
    },
    release: async (imageRefused) => {
      const released = await meter.release(hash, reserved.reservation!, clock(c.env), imageRefused);
      if (released.rate) c.set('rate', released.rate);
    },
  };
  const config = compressConfig(c.env);
  const { input, result } = await compressMetered(unit, key.tiers.image, config, async () => {
    const parsed = CompressParts.safeParse(partsOf(await readMultipart(c.req.raw, config.uploadReadTimeoutMs)));
    if (!parsed.success) throw badRequestFrom(parsed.error.issues);
    const parts = parsed.data;
    checkParts(parts, key.tiers.image);
    const bytes = await imageBytes(parts.image);
    return { request: compressRequestOf(parts, bytes, key.tiers.image), name: parts.image.name };
  });
  c.executionCtx.waitUntil(meter.report(hash));
  return imageResponse(result, input.name, input.request.bytes.length, performance.now() - started);
}

/**
 * The pipeline's request from the validated parts and the image's bytes, its output format settled now that
 * the input's is known (`keep`), and the rules checked again for it.
 */
export const compressRequestOf = (parts: CompressParts, bytes: Uint8Array, imageTier: ImageTier): CompressRequest => ({
  bytes,
  // Known once the input's format is given: only a `keep` before the upload is read leaves it open.
  format: checkParts(parts, imageTier, sniff(bytes).format) as ImageFormat,
  quality: parts.quality,
  width: parts.width,
  height: parts.height,
  targetKb: parts.target_kb,
  metadata: parts.metadata,
  palette: parts.palette,
  colors: parts.colors,
  lossless: parts.lossless,
});

/**
 * The rules between parts and the key's image tier, checked before the image is read (`input` undefined;
 * a `keep` then waits for it) and again with its format. The "Try it" planner asks the same, so the page
 * warns of exactly what an upload would be refused for. Returns the output format, once known.
 */
export function checkParts(
  parts: CompressParts,
  imageTier: ImageTier,
  input?: InputFormat | null,
): ImageFormat | undefined {
  const format = chosenFormat(parts.format, parts.palette, input, canWrite({ image: imageTier }, 'webp'));
  if (format !== undefined) requireFormat(imageTier, format, 'format');
  if (parts.target_kb !== undefined && !can({ image: imageTier }, 'target_kb'))
    throw new ApiError('plan_upgrade_required', 'target_kb needs the pro tier', { param: 'target_kb' });
  const broken = brokenRule({ ...parts, format, targetKb: parts.target_kb });
  if (broken) throw new ApiError('bad_request', broken.message, { param: broken.field });
  return format;
}

function imageResponse(result: CompressResult, uploadName: string, originalSize: number, totalMs: number): Response {
  const size = result.bytes.length;
  const savings = originalSize === 0 ? 0 : ((originalSize - size) / originalSize) * 100;
  const headers = new Headers({
    'Content-Type': MEDIA_TYPES[result.format],
    'Content-Length': String(size),
    'Content-Disposition': contentDisposition(uploadName, EXTENSIONS[result.format]),
    'Cache-Control': 'no-store',
    'X-Original-Size': String(originalSize),
    'X-Compressed-Size': String(size),
    'X-Savings-Percent': savings.toFixed(1),
    'X-Image-Width': String(result.width),
    'X-Image-Height': String(result.height),
    'X-Quality': String(result.quality),
    'Server-Timing': serverTiming(result, totalMs),
  });
  if (result.targetReached !== undefined) headers.set('X-Target-Reached', String(result.targetReached));
  return new Response(result.bytes, { status: 200, headers });
}

const ms = (value: number): string => value.toFixed(1);

function serverTiming(result: CompressResult, totalMs: number): string {
  const { decode, resize, encode } = result.timings;
  return `decode;dur=${ms(decode)}, resize;dur=${ms(resize)}, encode;dur=${ms(encode)};desc="${result.encodes} encode${result.encodes === 1 ? '' : 's'}", total;dur=${ms(totalMs)}`;
}

/**
 * `inline; filename="<ASCII stem>.<ext>"`, plus the RFC 6266 `filename*` with the UTF-8 name when the
 * name has characters the ASCII form had to replace.
 */
export function contentDisposition(uploadName: string, ext: string): string {
  // Browsers send a double quote in a multipart file name as %22.
  const name = uploadName.replaceAll('%22', '"');
  const ascii = `${safeStem(name)}.${ext}`;
  const unicode = `${unicodeStem(name)}.${ext}`;
  return unicode === ascii || unicodeStem(name) === ''
    ? `inline; filename="${ascii}"`
    : `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(unicode).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

const stemOf = (name: string): string => {
  const base = name.replace(/^.*[\\/]/, '');
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
};

/** The stem with only control characters, quotes and path separators removed, for `filename*`. */
const unicodeStem = (name: string): string =>
  stemOf(name)
    .replace(/[\u0000-\u001f\u007f"\\/]+/g, '')
    .trim()
    .slice(0, 100);

/**
 * The upload's name without its extension, reduced to characters safe in a quoted header value;
 * `image` when nothing usable is left.
 */
export function safeStem(name: string): string {
  const stem = stemOf(name)
    .replace(/[^A-Za-z0-9._ -]+/g, '_')
    .replace(/^[._ ]+|[ ]+$/g, '')
    .slice(0, 100);
  return stem === '' || /^_+$/.test(stem) ? 'image' : stem;
}
