// Tools API QR codes: GET /qr (metered) hands out a signed image URL; GET /qr/image (key-free) renders it.
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.ts';
import { envelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { strictQueryEncoding } from '../http/query-encoding.ts';
import {
  canonicalQuery,
  imageUrl,
  planQr,
  QR_DEFAULTS,
  QR_ECC_LEVELS,
  QR_FORMATS,
  QR_IMAGE_PATH,
  QR_MARGIN_MAX,
  QR_SIZE_MAX,
  QR_SIZE_MIN,
  renderQr,
  signedValues,
  type QrOptions,
  type RenderedQr,
} from '../qr/qr-image.ts';
import { sign, SIGNED_PARAMS, signingSecrets, verify, type SignedValues } from '../qr/signature.ts';
import { choiceParam, integerParam, queryObject } from '../params.ts';
import { errorResponses, toolsGet, ToolsMeta, toolsOk } from './schemas.ts';

/** Signed images never change, so any cache may keep them for a year. */
export const QR_IMAGE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** Changes whenever the renderer's output for the same parameters could change. */
const RENDERER_VERSION = 'r1';

const colorParam = z
  .string()
  .regex(/^(?:[0-9a-fA-F]{3}){1,2}$/, { error: 'must be a 3- or 6-digit hex color without #, such as 000000 or f80' })
  .transform((hex) => (hex.length === 3 ? [...hex].map((d) => d + d).join('') : hex).toLowerCase());

const QrQuery = queryObject({
  data: z
    .string({ error: 'is required: the text or URL to encode' })
    .min(1, { error: 'must not be empty' })
    .openapi({ param: { description: 'Text or URL to encode, as UTF-8 bytes' }, example: 'https://example.com' }),
  size: integerParam(QR_SIZE_MIN, QR_SIZE_MAX)
    .optional()
    .openapi({
      param: {
        description: `Width and height in pixels, ${QR_SIZE_MIN} to ${QR_SIZE_MAX} (default ${QR_DEFAULTS.size})`,
      },
      example: '300',
    }),
  color: colorParam
    .optional()
    .openapi({ param: { description: 'Foreground, hex without # (default 000000)' }, example: '000000' }),
  bgcolor: colorParam
    .optional()
    .openapi({ param: { description: 'Background, hex without # (default ffffff)' }, example: 'ffffff' }),
  format: choiceParam(QR_FORMATS)
    .optional()
    .openapi({ param: { description: 'png or svg (default png)' }, example: 'png' }),
  ecc: choiceParam(QR_ECC_LEVELS)
    .optional()
    .openapi({
      param: { description: 'Error correction: L 7 %, M 15 %, Q 25 %, H 30 % of the code may be damaged (default M)' },
      example: 'M',
    }),
  margin: integerParam(0, QR_MARGIN_MAX)
    .optional()
    .openapi({
      param: { description: `Quiet zone in modules, 0 to ${QR_MARGIN_MAX} (default ${QR_DEFAULTS.margin})` },
      example: '4',
    }),
});

/**
 * The image URL's parameters. GET /api/v1/qr writes every one of them, so each is required; a missing or
 * changed one fails the signature check (403 forbidden, which names `sig`), so they are read as plain
 * strings here and only parsed by QrQuery once the signature matched. The documented types and values
 * are QrQuery's, as the signed URL carries them (canonical: lower-case hex, upper-case ecc).
 */
// A parameter given twice is refused by the validation hook (src/http/validation.ts), as on every route.
const given = z.string().optional();
const signedParam = (schema: Record<string, unknown>, description: string, example: string) =>
  given.openapi({
    ...schema,
    param: { required: true, description: `${description}. As GET /api/v1/qr wrote it in the URL` },
    example,
  });
const ImageQuery = queryObject({
  format: signedParam({ type: 'string', enum: [...QR_FORMATS] }, 'Image format', 'png'),
  size: signedParam(
    { type: 'integer', minimum: QR_SIZE_MIN, maximum: QR_SIZE_MAX },
    'Width and height in pixels',
    '300',
  ),
  color: signedParam(
    { type: 'string', pattern: '^[0-9a-f]{6}$' },
    'Foreground colour, 6-digit hex without #',
    '000000',
  ),
  bgcolor: signedParam(
    { type: 'string', pattern: '^[0-9a-f]{6}$' },
    'Background colour, 6-digit hex without #',
    'ffffff',
  ),
  ecc: signedParam({ type: 'string', enum: [...QR_ECC_LEVELS] }, 'Error-correction level', 'M'),
  margin: signedParam({ type: 'integer', minimum: 0, maximum: QR_MARGIN_MAX }, 'Quiet zone in modules', '4'),
  data: signedParam({ type: 'string', minLength: 1 }, 'The encoded text, percent-encoded UTF-8', 'https://example.com'),
  sig: signedParam(
    { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
    'The HMAC-SHA256 signature over the other parameters (base64url)',
    'jvhB4Is25gIVGVy0_K6SqxSrVPlVh46KHdjFWG-0JUw',
  ),
} satisfies Record<(typeof SIGNED_PARAMS)[number] | 'sig', typeof given>);

const QrLink = z
  .object({
    data: z.object({
      url: z
        .string()
        .openapi({ description: 'Signed, key-free image URL, cacheable for a year; safe in an <img> tag' }),
      format: z.enum(QR_FORMATS),
      size: z.number().int(),
      color: z.string().openapi({ example: '000000' }),
      bgcolor: z.string().openapi({ example: 'ffffff' }),
      ecc: z.enum(QR_ECC_LEVELS),
      margin: z.number().int(),
      data: z.string(),
    }),
    meta: ToolsMeta,
  })
  .openapi('QrLink');

export const qrRoute = toolsGet({
  path: '/api/v1/qr',
  summary: 'A signed, key-free image URL of a QR code for the given text',
  description:
    'The URL carries every option, defaults written out, and a signature over them all: it needs no key, cannot be ' +
    'altered, and never expires. GET /api/v1/qr/image renders it. Refused (400): the same color and bgcolor, more ' +
    'data than the ecc level holds, or a size under one pixel per module.',
  request: { query: QrQuery },
  responses: {
    200: toolsOk('The signed image URL and the options it renders', QrLink),
  },
  errors: ['bad_request'],
});

const imageHeaders = {
  ETag: { schema: { type: 'string' as const }, description: 'Strong validator; send it back as If-None-Match' },
  'Cache-Control': { schema: { type: 'string' as const }, description: QR_IMAGE_CACHE_CONTROL },
};

export const qrImageRoute = createRoute({
  method: 'get',
  path: QR_IMAGE_PATH,
  summary: 'Render a QR code from a signed URL made by GET /api/v1/qr (no key; cacheable)',
  tags: ['Tools API'],
  security: [],
  middleware: [strictQueryEncoding] as const,
  request: { query: ImageQuery },
  responses: {
    200: {
      description: 'The QR code at exactly size × size pixels',
      headers: imageHeaders,
      content: {
        'image/png': { schema: { type: 'string', format: 'binary' } },
        'image/svg+xml': { schema: { type: 'string' } },
      },
    },
    301: {
      description:
        'The same signed URL spelt otherwise (parameters reordered, escapes written differently): Location is its one canonical spelling',
      headers: { Location: { schema: { type: 'string' as const }, description: 'The canonical URL of this image' } },
    },
    304: { description: 'Not modified (If-None-Match matched)', headers: imageHeaders },
    ...errorResponses('bad_request', 'forbidden'),
  },
});

const secretsOf = (c: Context<AppEnv>) => signingSecrets(c.env.QR_SIGNING_SECRET, c.env.QR_SIGNING_SECRET_PREVIOUS);

/** The validated image-URL parameters as options; only reached after the signature matched. */
function optionsFrom(values: Record<string, string | undefined>): QrOptions {
  const parsed = QrQuery.safeParse(values);
  if (!parsed.success) throw new ApiError('bad_request', 'the signed parameters are not valid');
  return withDefaults(parsed.data);
}

function withDefaults(q: z.infer<typeof QrQuery>): QrOptions {
  return {
    data: q.data,
    size: q.size ?? QR_DEFAULTS.size,
    color: q.color ?? QR_DEFAULTS.color,
    bgcolor: q.bgcolor ?? QR_DEFAULTS.bgcolor,
    format: q.format ?? QR_DEFAULTS.format,
    ecc: q.ecc ?? QR_DEFAULTS.ecc,
    margin: q.margin ?? QR_DEFAULTS.margin,
  };
}

function imageResponse(body: BodyInit | null, status: 200 | 304, etag: string, contentType: string): Response {
  const headers = new Headers({
    ETag: etag,
    'Cache-Control': QR_IMAGE_CACHE_CONTROL,
    'Access-Control-Allow-Origin': '*',
  });
  if (status === 200) {
    headers.set('Content-Type', contentType);
    headers.set('Content-Disposition', `inline; filename="qr.${contentType.startsWith('image/png') ? 'png' : 'svg'}"`);
    // An SVG opened on its own is a document of this origin: it gets no script, no fetches, no frames.
    if (contentType.startsWith('image/svg'))
      headers.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  }
  return new Response(body, { status, headers });
}

/**
 * Renders in progress in this isolate, by signature: identical requests that miss the cache together
 * share one render instead of each starting their own. An entry stays until the render is in the Cache
 * API, so a request arriving between the render and the cache write shares it too.
 */
const rendering = new Map<string, Promise<RenderedQr>>();

function renderOnce(
  key: string,
  options: QrOptions,
  store: (image: RenderedQr) => Promise<void>,
  waitUntil: (p: Promise<unknown>) => void,
): Promise<RenderedQr> {
  const running = rendering.get(key);
  if (running !== undefined) return running;
  const render = Promise.resolve().then(() => renderQr(planQr(options), options));
  rendering.set(key, render);
  // Kept alive by the request that started it, even if that request's client goes away, since others may be waiting.
  waitUntil(
    render
      .then(store)
      .catch((err: unknown) => console.error('QR render or cache write failed', String(err)))
      .finally(() => rendering.delete(key)),
  );
  return render;
}

/** The one URL a signed image is served (and cached) at. */
const canonicalUrl = (origin: string, values: SignedValues, sig: string): string =>
  `${origin}${QR_IMAGE_PATH}?${canonicalQuery(values, sig)}`;

function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.trim() === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

export function registerQr(app: OpenAPIHono<AppEnv>): void {
  app.openapi(qrRoute, async (c) => {
    const options = withDefaults(c.req.valid('query'));
    planQr(options);
    const values = signedValues(options);
    const sig = await sign(secretsOf(c).current, values);
    const url = imageUrl(new URL(c.req.url).origin, values, sig);
    return c.json(envelope(c, { url, ...options }), 200);
  });

  app.openapi(qrImageRoute, async (c) => {
    const query = c.req.valid('query');
    if (!(await verify(secretsOf(c), query, query.sig))) {
      throw new ApiError(
        'forbidden',
        'the signature is missing or does not match the parameters; get a new URL from GET /api/v1/qr',
        {
          param: 'sig',
        },
      );
    }
    // The signature covers the decoded values, so one image has many spellings (reordered parameters,
    // escapes written otherwise). Only the canonical one is served, so it is the one cache entry.
    const sig = query.sig!;
    const values = Object.fromEntries(SIGNED_PARAMS.map((p) => [p, query[p] ?? ''])) as SignedValues;
    const requested = new URL(c.req.url);
    const canonical = canonicalUrl(requested.origin, values, sig);
    if (requested.href !== canonical) {
      return new Response(null, {
        status: 301,
        headers: { Location: canonical, 'Cache-Control': QR_IMAGE_CACHE_CONTROL, 'Access-Control-Allow-Origin': '*' },
      });
    }
    const options = optionsFrom(values);
    const etag = `"${RENDERER_VERSION}-${sig}"`;
    const contentType = options.format === 'svg' ? 'image/svg+xml; charset=utf-8' : 'image/png';
    if (etagMatches(c.req.header('If-None-Match'), etag)) return imageResponse(null, 304, etag, contentType);

    // Workers responses are not cached by the CDN on their own; the Cache API keeps renders per colo.
    // HEAD is answered from the same entry as GET (Hono drops the body), and fills it on a miss.
    const cacheKey = new Request(canonical, { method: 'GET' });
    const cached = await caches.default.match(cacheKey);
    if (cached) return cached;
    const image = await renderOnce(
      etag,
      options,
      (done) => caches.default.put(cacheKey, imageResponse(done.body, 200, etag, done.contentType)),
      (p) => c.executionCtx.waitUntil(p),
    );
    return imageResponse(image.body, 200, etag, image.contentType);
  });
}
