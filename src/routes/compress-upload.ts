// The compression behind POST /api/v1/compress and the console's Try it, each door bringing its own key's
// meter: reserve a unit of the month, hand the use case (src/compress/service.ts) a reader of the upload
// and the meter's commit and release, and write the image with its headers. An adapter shared by two
// routes, so neither route imports the other.
import type { Context } from 'hono';
import { compressConfig } from '../compress/config.ts';
import { EXTENSIONS, MEDIA_TYPES } from '../compress/formats.ts';
import { checkParts, compressRequestOf } from '../compress/parts.ts';
import type { InfoResult } from '../compress/info/types.ts';
import { cropHeaders } from '../compress/transform/options.ts';
import { compressMetered, type UnitMeter } from '../compress/service.ts';
import type { CompressedImage } from '../compress/types.ts';
import { imageBytes, partsOf, readMultipart } from '../compress/upload.ts';
import { clock } from '../env.ts';
import { badRequestFrom } from '../errors.ts';
import type { AppEnv } from '../http/context.ts';
import { enforce } from '../metering/enforce.ts';
import type { KeyMeter } from '../metering/key-meter.ts';
import { CompressParts } from './compress-schema.ts';

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
  if ('info' in result) return infoResponse(result, performance.now() - started);
  return imageResponse(result, input.name, input.request.bytes.length, performance.now() - started);
}

/** format=json: the description, never cached (like every answer of /compress). */
function infoResponse(result: InfoResult, totalMs: number): Response {
  const body = JSON.stringify(result.info);
  return new Response(body, {
    status: 200,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'Server-Timing': `preview;dur=${ms(result.timings.preview)}, total;dur=${ms(totalMs)}`,
    },
  });
}

function imageResponse(result: CompressedImage, uploadName: string, originalSize: number, totalMs: number): Response {
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
    'X-Encoder-Quality': String(result.encoderQuality),
    'Server-Timing': serverTiming(result, totalMs),
  });
  if (result.targetReached !== undefined) headers.set('X-Target-Reached', String(result.targetReached));
  if (result.frames) headers.set('X-Frames', `${result.frames.written}/${result.frames.total}`);
  if (result.crop) for (const [name, value] of Object.entries(cropHeaders(result.crop))) headers.set(name, value);
  if (result.gainMap) headers.set('X-Gain-Map', result.gainMap);
  return new Response(result.bytes, { status: 200, headers });
}

const ms = (value: number): string => value.toFixed(1);

function serverTiming(result: CompressedImage, totalMs: number): string {
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
