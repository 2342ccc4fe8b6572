// The `data` of a meta-tags answer, one page's: declared once, as the schema the API document shows, and
// the extraction's types are read from it (z.output), so the service and the document cannot drift apart.
import { z } from '@hono/zod-openapi';

const url = (description: string) => z.string().nullable().openapi({ description });

export const OpenGraphMedia = z
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
        images: z.array(OpenGraphMedia),
        videos: z.array(OpenGraphMedia),
        audios: z.array(OpenGraphMedia),
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

export type OpenGraphMedia = z.output<typeof OpenGraphMedia>;
export type PageData = z.output<typeof PageData>;
