// Schemas of the meta-tag endpoints: the query and body that are validated, and the documented answers.
import { z } from '@hono/zod-openapi';
import { MAX_URL_LENGTH } from '../fetch/limits.ts';
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

const url = (description: string) => z.string().nullable().openapi({ description });

const Media = z
  .object({
    url: z.string().nullable(),
    secure_url: z.string().optional(),
    type: z.string().optional(),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
    alt: z.string().optional(),
  })
  .openapi('OpenGraphMedia', {
    description: 'One og:image (or og:video, og:audio) with the properties that follow it',
  });

export const PageData = z
  .object({
    url: z.string().openapi({ description: 'The URL asked for, normalised (no fragment)' }),
    final_url: z.string().openapi({ description: 'Where the redirects (at most 5) ended' }),
    status: z.number().int().openapi({ description: 'HTTP status of the final response (below 400)' }),
    content_type: z.string().nullable().openapi({
      description: 'Media type of the final response; only text/html and application/xhtml+xml are parsed',
    }),
    title: z
      .string()
      .nullable()
      .openapi({ description: 'The first <title> of the document (not one inside inline SVG), whitespace collapsed' }),
    description: z.string().nullable().openapi({ description: '<meta name="description">' }),
    canonical: url('<link rel="canonical">, resolved'),
    lang: z.string().nullable().openapi({ description: 'The lang attribute of <html>' }),
    charset: z.string().nullable().openapi({
      description: 'The encoding the page was decoded with (WHATWG name, e.g. utf-8, windows-1252, shift_jis)',
    }),
    favicon: url(
      'The first <link rel="icon"> (or shortcut icon), else apple-touch-icon, else /favicon.ico of the final origin; null for non-HTML',
    ),
    meta: z.record(z.string(), z.string()).openapi({
      description: 'Every <meta> by name, property or http-equiv (lower-cased) → content; the first of duplicates wins',
    }),
    open_graph: z
      .object({
        title: z.string().nullable(),
        type: z.string().nullable(),
        url: url('og:url, resolved'),
        image: url('The first image URL, resolved'),
        video: url('The first video URL, resolved'),
        audio: url('The first audio URL, resolved'),
        images: z.array(Media),
        videos: z.array(Media),
        audios: z.array(Media),
      })
      .catchall(z.unknown())
      .openapi({
        description:
          'Every og:* property without its prefix (first wins); images, videos and audios grouped with their properties',
      }),
    twitter: z
      .object({ card: z.string().nullable() })
      .catchall(z.string().nullable())
      .openapi({ description: 'Every twitter:* tag without its prefix (first wins); image URLs resolved' }),
    json_ld: z
      .array(z.unknown())
      .openapi({ description: 'Each application/ld+json block, parsed; invalid blocks are skipped' }),
  })
  .openapi('MetaTags');

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
