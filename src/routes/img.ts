// GET /api/v1/img/{account_id}/{signature}/{options}/{source}: a signed image URL. Thin: the work is
// src/img/service.ts; this reads the path and headers and writes the image with its caching headers.
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import { compressConfig } from '../compress/config.ts';
import { clock } from '../env.ts';
import type { AppEnv } from '../http/context.ts';
import { imageCache, storedHeaders } from '../img/cache.ts';
import { sourcePolicy } from '../img/config.ts';
import { IMAGE_CACHE_CONTROL, MAX_SOURCE_BYTES } from '../img/limits.ts';
import { signedImage } from '../img/service.ts';
import { accountMeter } from '../metering/account-meter-stub.ts';
import { header, imageResponse } from './compress-doc.ts';
import { errorResponses } from './schemas.ts';

export const IMG_PATH = '/api/v1/img';

const segment = (name: string, description: string) => ({
  name,
  in: 'path' as const,
  required: true,
  schema: { type: 'string' as const },
  description,
});

const imgDoc: RouteConfig = {
  method: 'get',
  path: `${IMG_PATH}/{account_id}/{signature}/{options}/{source}`,
  summary: 'A signed image URL: the source fetched, compressed, negotiated and cached at the edge',
  description:
    'No key: the URL is signed. `signature` is base64url (no padding) of HMAC-SHA256, keyed with the UTF-8 bytes of one of the ' +
    "account's signing secrets (POST /api/v1/signing-secrets), over `{options}/{source}`. `options`: `w=800,h=600,q=75,f=auto,m=strip,kb=200` " +
    '(width, height, quality on the one scale of POST /compress (q means the same in every lossy format), format jpeg|png|webp|avif|jxl|auto, metadata, target_kb, with the bounds of POST /compress), ' +
    'and the transformations `fit`, `g` (gravity), `r` (rotate), `flip`, `bg` (background, hex without #: `bg=ff8800`) and `dpr` ' +
    'with the values of POST /compress; or `_` for none; ' +
    "without `f` the source's format is kept (a GIF source, its first frame, as PNG; an AVIF source as AVIF on the pro tier, else JPEG). `f=json` answers the description of the source (ImageInfo, as format=json on POST /compress; not with w, h, kb or a transformation). `f=auto` is JPEG XL when Accept names image/jxl, else AVIF when it names image/avif, else WebP when it names image/webp (pro tier; an animated source: WebP only), else the source's format (a WebP source " +
    `as JPEG, a GIF as PNG). \`source\` is base64url (no padding) of an absolute http(s) URL, fetched under the URL rules (no private addresses, ` +
    `redirects re-checked, at most ${MAX_SOURCE_BYTES / (1024 * 1024)} MB). A cache miss uses one compression of the account's month; ` +
    'a hit (X-Cache: HIT) and a bad signature (403) use none.',
  tags: ['Image API'],
  security: [],
  parameters: [
    segment('account_id', 'The account whose secrets sign the URL'),
    segment('signature', 'base64url HMAC-SHA256 of `{options}/{source}`'),
    segment('options', 'Comma-separated name=value pairs, or `_`'),
    segment('source', 'base64url of the source URL'),
  ],
  responses: {
    200: imageResponse({
      'Cache-Control': header(IMAGE_CACHE_CONTROL),
      ETag: header('Strong: the hash of the bytes'),
      Vary: header('Accept'),
      'X-Cache': header('HIT (from the cache: nothing fetched, decoded or charged) or MISS'),
      'X-Crop-Box': header(
        'When fit=cover or crop cropped the image: x,y,width,height of the kept box in upright source pixels',
      ),
      'X-Gravity': header(
        'With X-Crop-Box: the gravity that placed the crop (g=face that found no face says auto, g=auto that fell back to the centre says center)',
      ),
      'X-Crop-Confidence': header('With g=auto or g=face and a crop: how sure the smart crop was, 0.00–1.00'),
      'X-Gain-Map': header(
        'Only when the source JPEG had an HDR gain map: kept (JPEG or AVIF output, the map put through the same geometry) or dropped (another format)',
      ),
    }),
    304: { description: 'If-None-Match named the ETag of the cached image' },
    ...errorResponses(
      'bad_request',
      'forbidden',
      'plan_upgrade_required',
      'unsupported_media_type',
      'unprocessable_image',
      'image_too_large',
      'quota_exceeded',
      'fetch_failed',
      'overloaded',
    ),
  },
};

export function registerImg(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath(imgDoc);
  app.get(`${IMG_PATH}/:account_id/:signature/:options/:source`, async (c) => {
    const outcome = await signedImage(
      {
        accountId: c.req.param('account_id'),
        signature: c.req.param('signature'),
        options: c.req.param('options'),
        source: c.req.param('source'),
      },
      {
        db: c.env.DB,
        meter: (id) => accountMeter(c.env, id),
        now: clock(c.env),
        policy: sourcePolicy(c.env, c.req.url),
        compress: compressConfig(c.env),
        cache: imageCache(c.env),
        accept: c.req.header('accept') ?? null,
        onRate: (rate) => c.set('rate', rate),
        defer: (work) => c.executionCtx.waitUntil(work),
      },
    );
    if (outcome.cache === 'HIT') {
      const cached = outcome.response;
      const headers = new Headers(cached.headers);
      headers.set('Vary', 'Accept');
      headers.set('X-Cache', 'HIT');
      const etag = cached.headers.get('etag');
      if (etag !== null && ifNoneMatch(c.req.header('if-none-match'), etag)) {
        await cached.body?.cancel();
        headers.delete('Content-Length');
        headers.delete('Content-Type');
        return new Response(null, { status: 304, headers });
      }
      return new Response(cached.body, { status: 200, headers });
    }
    const { image } = outcome;
    return new Response(image.bytes, {
      status: 200,
      headers: {
        'Content-Type': image.contentType,
        'Content-Length': String(image.bytes.length),
        'Cache-Control': IMAGE_CACHE_CONTROL,
        ETag: image.etag,
        Vary: 'Accept',
        'X-Cache': 'MISS',
        ...storedHeaders(image),
      },
    });
  });
}

/** Whether If-None-Match names `etag` (strong comparison; `*` matches any). */
function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
