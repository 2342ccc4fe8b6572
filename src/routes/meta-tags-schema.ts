// Schemas of the meta-tag endpoints: the query and body that are validated, and the documented answers.
import { z } from '@hono/zod-openapi';
import { MAX_URL_LENGTH } from '../fetch/limits.ts';
import { PageData } from '../meta/page-data.ts';
import { queryObject } from '../params.ts';
import { ToolsMeta } from './schemas.ts';

const urlDescription = `An absolute http or https URL on port 80 or 443, at most ${MAX_URL_LENGTH} characters, whose host is public`;

export const MetaQuery = queryObject({
  url: z
    .string({ error: 'is required: the page to read, such as https://example.com' })
    .openapi({ param: { description: urlDescription }, example: 'https://example.com/' }),
});

export const BulkBody = z
  .strictObject(
    {
      urls: z
        .array(z.string({ error: 'must be a string' }), { error: 'is required: an array of URLs' })
        .min(1, { error: 'must name at least one URL' })
        .openapi({ description: `${urlDescription}. At most 5 (free), 25 (developer) or 100 (enterprise) per call` }),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field "${issue.keys[0]}"; the body is { "urls": [...] }`
          : undefined,
    },
  )
  .openapi('MetaTagsBulkRequest', { example: { urls: ['https://example.com/', 'https://example.org/'] } });

const Charset = z
  .object({
    encoding: z.string().openapi({
      description: 'The encoding the page was decoded with (WHATWG name), as data.charset',
      example: 'euc-jp',
    }),
    source: z.enum(['bom', 'header', 'meta', 'late-meta', 'detected', 'default']).openapi({
      description:
        'How it was chosen: a byte order mark, the Content-Type header, a <meta> in the first 1,024 bytes, a <meta> later in the head, detected from the bytes, or nothing to go on (UTF-8)',
    }),
  })
  .nullable()
  .openapi('MetaCharset', { description: 'null when the URL did not answer HTML' });
const Cache = z
  .enum(['hit', 'miss'])
  .openapi({ description: 'Whether the extraction came from the cache (META_CACHE_TTL)' });

export const MetaTagsResponse = z
  .object({
    data: PageData,
    meta: ToolsMeta.extend({ cache: Cache, charset: Charset }),
  })
  .openapi('MetaTagsResponse');

const ItemError = z.object({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export const BulkResponse = z
  .object({
    data: z
      .array(
        z.union([
          z.object({ url: z.string(), ok: z.literal(true), data: PageData, cache: Cache, charset: Charset }),
          z.object({ url: z.string(), ok: z.literal(false), error: ItemError }),
        ]),
      )
      .openapi({ description: 'One entry per URL, in the order given; `url` exactly as given' }),
    meta: ToolsMeta.extend({
      total: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
      cache_hits: z.number().int(),
    }),
  })
  .openapi('MetaTagsBulkResponse');
