// Tools API meta tags: GET /meta-tags (one page) and POST /meta-tags/bulk (many, counted as one request).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { toolsAuth } from '../http/auth.ts';
import type { AppEnv } from '../http/context.ts';
import { envelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { parseJsonBody } from '../http/json-body.ts';
import { metaConfig } from '../meta/config.ts';
import { BULK_BODY_MAX_BYTES, BULK_MAX_URLS } from '../meta/limits.ts';
import { bulkMetaTags, metaTags, type MetaContext } from '../meta/service.ts';
import { BulkBody, BulkResponse, MetaQuery, MetaTagsResponse } from './meta-tags-schema.ts';
import { errorResponses, toolsGet, TOOLS_SECURITY, toolsOk } from './schemas.ts';

export const BULK_PATH = '/api/v1/meta-tags/bulk';

const FETCH_RULES =
  'Only http/https on ports 80/443, no credentials, no loopback, private, link-local, CGNAT, multicast, reserved or IPv4-mapped ' +
  'hosts in any notation, nor local names; at most 5 redirects, each checked the same way; 8 s in all; at most 2 MB read, ' +
  'stopping after </head>.';

export const metaTagsRoute = toolsGet({
  path: '/api/v1/meta-tags',
  summary: 'Meta tags, Open Graph, Twitter card and JSON-LD data of a web page',
  description: `${FETCH_RULES} Non-HTML answers give 200 with their content_type and nothing extracted. Successful extractions are cached (meta.cache).`,
  request: { query: MetaQuery },
  responses: {
    200: toolsOk('What the page declares', MetaTagsResponse),
  },
  errors: ['bad_request', 'fetch_failed'],
});

export const bulkDoc = {
  method: 'post' as const,
  path: BULK_PATH,
  summary: 'Meta tags of several pages at once, in order; counts as one request',
  description:
    `Each URL as in GET /api/v1/meta-tags, six fetched at a time; one failing URL is reported in its own entry and never fails the ` +
    `call. At most ${BULK_MAX_URLS.free} (free), ${BULK_MAX_URLS.developer} (developer) or ${BULK_MAX_URLS.enterprise} (enterprise) URLs: ` +
    `more gives 400 with details.max. The call ends within 30 s; URLs not fetched by then fail with fetch_failed.`,
  tags: ['Tools API'],
  security: TOOLS_SECURITY,
  middleware: [toolsAuth({ count: true })] as const,
  request: { body: { required: true, content: { 'application/json': { schema: BulkBody } } } },
  responses: {
    200: toolsOk('One entry per URL', BulkResponse),
    ...errorResponses('bad_request', 'unauthorized', 'forbidden', 'payload_too_large', 'rate_limit_exceeded'),
  },
};

const contextOf = (c: Context<AppEnv>): MetaContext => ({
  ...metaConfig(c.env, c.req.url),
  defer: (work) => c.executionCtx.waitUntil(work),
});

export function registerMetaTags(app: OpenAPIHono<AppEnv>): void {
  app.openapi(metaTagsRoute, async (c) => {
    const { data, cache, charset } = await metaTags(c.req.valid('query').url, contextOf(c));
    return c.json(envelope(c, data, { cache, charset }), 200);
  });

  // The body is read by hand (capped while streaming) and checked with the documented schema.
  const { middleware, ...doc } = bulkDoc;
  app.openAPIRegistry.registerPath(doc);
  app.post(BULK_PATH, ...middleware, async (c) => {
    const example = '{"urls":["https://example.com/"]}';
    const { urls } = await parseJsonBody(c.req.raw, BulkBody, BULK_BODY_MAX_BYTES, example);
    const max = BULK_MAX_URLS[c.var.key.tiers.tools];
    if (urls.length > max) {
      throw new ApiError(
        'bad_request',
        `a ${c.var.key.tiers.tools}-tier key may check at most ${max} URLs per call, not ${urls.length}`,
        {
          param: 'urls',
          details: { max, given: urls.length },
        },
      );
    }
    const items = await bulkMetaTags(urls, contextOf(c));
    const succeeded = items.filter((i) => i.ok).length;
    const cacheHits = items.filter((i) => i.ok && i.cache === 'hit').length;
    return c.json(
      envelope(c, items, { total: items.length, succeeded, failed: items.length - succeeded, cache_hits: cacheHits }),
      200,
    );
  });
}
