// Tools API catalogue: GET /tools, /tools/{slug}, /categories.
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  getTool,
  listCategories,
  listTools,
  TOOL_FIELDS,
  type Catalogue,
  type ToolField,
} from '../catalogue/catalogue.ts';
import { toolsSiteUrl } from '../catalogue/site-url.ts';
import type { AppEnv } from '../http/context.ts';
import { envelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { integerParam, queryObject } from '../params.ts';
import { toolsGet, ToolsMeta, toolsOk } from './schemas.ts';

export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 500;
export const LIST_OFFSET_MAX = 100_000;
export const SEARCH_MAX_CHARS = 100;
export const CATEGORY_MAX_CHARS = 50;

const fieldsParam = z.string().transform((raw, ctx) => {
  const names = raw.split(',').map((s) => s.trim());
  const unknown = names.find((n) => !(TOOL_FIELDS as readonly string[]).includes(n));
  if (unknown !== undefined) {
    const what = unknown === '' ? 'an empty field name' : `unknown field "${unknown}"`;
    ctx.addIssue({ code: 'custom', message: `has ${what}; valid fields: ${TOOL_FIELDS.join(', ')}` });
    return z.NEVER;
  }
  return [...new Set(names)] as ToolField[];
});

/** Blank means "not given"; surrounding spaces are not part of a term. */
const textParam = (max: number) =>
  z
    .string()
    .transform((s) => s.trim())
    .pipe(z.string().max(max, { error: `must be at most ${max} characters` }))
    .transform((s) => (s === '' ? undefined : s));

const ListQuery = queryObject({
  category: textParam(CATEGORY_MAX_CHARS)
    .optional()
    .openapi({
      param: { description: 'Only tools of this category, matched case-insensitively (see GET /api/v1/categories)' },
      example: 'PDF',
    }),
  search: textParam(SEARCH_MAX_CHARS)
    .optional()
    .openapi({
      param: {
        description: `Case-insensitive substring of the name or description, up to ${SEARCH_MAX_CHARS} characters`,
      },
      example: 'pdf',
    }),
  fields: fieldsParam.optional().openapi({
    param: { description: `Comma list of the fields to return, in that order: ${TOOL_FIELDS.join(', ')}` },
    example: 'name,url',
  }),
  limit: integerParam(1, LIST_LIMIT_MAX)
    .optional()
    .openapi({
      param: { description: `Page size, 1 to ${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT})` },
      example: '20',
    }),
  offset: integerParam(0, LIST_OFFSET_MAX)
    .optional()
    .openapi({
      param: { description: `Matches to skip, 0 to ${LIST_OFFSET_MAX} (default 0)` },
      example: '0',
    }),
});

const Tool = z
  .object({
    slug: z.string().openapi({ example: 'merge-pdf' }),
    name: z.string().openapi({ example: 'Merge PDF' }),
    description: z.string(),
    url: z.string().openapi({ example: 'https://tools.shrinkray.dev/pdf/merge-pdf' }),
    tag: z.string().openapi({ example: 'Productivity' }),
    category: z.string().openapi({ example: 'PDF' }),
    keyword: z.string().openapi({ example: 'merge pdf files online' }),
  })
  .openapi('Tool');

const ToolList = z
  .object({
    data: z
      .array(Tool.partial())
      .openapi({ description: 'Tools ordered by name; only the requested fields when `fields` is given' }),
    meta: ToolsMeta.extend({
      total: z.number().int().openapi({ description: 'All matches before paging' }),
      category: z.string().openapi({ description: 'The category filter as given, or `all`' }),
      limit: z.number().int(),
      offset: z.number().int(),
    }),
  })
  .openapi('ToolList');

const CategoryList = z
  .object({
    data: z.array(z.object({ category: z.string().openapi({ example: 'PDF' }), count: z.number().int() })),
    meta: ToolsMeta.extend({ total: z.number().int().openapi({ description: 'Number of categories' }) }),
  })
  .openapi('CategoryList');

export const listToolsRoute = toolsGet({
  path: '/api/v1/tools',
  summary: 'List tools, filtered by category and search, with field selection and paging',
  request: { query: ListQuery },
  responses: {
    200: toolsOk('A page of tools', ToolList),
  },
  errors: ['bad_request'],
});

export const getToolRoute = toolsGet({
  path: '/api/v1/tools/{slug}',
  summary: 'One tool by its slug',
  request: {
    params: z.object({ slug: z.string().openapi({ param: { description: 'The tool slug' }, example: 'merge-pdf' }) }),
  },
  responses: {
    200: toolsOk('The tool', z.object({ data: Tool, meta: ToolsMeta })),
  },
  errors: ['not_found'],
});

export const categoriesRoute = toolsGet({
  path: '/api/v1/categories',
  summary: 'The categories of the catalogue with their tool counts',
  responses: {
    200: toolsOk('Categories by name', CategoryList),
  },
});

const catalogue = (c: Context<AppEnv>): Catalogue => ({ db: c.env.DB, siteUrl: toolsSiteUrl(c.env.TOOLS_SITE_URL) });

export function registerTools(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listToolsRoute, async (c) => {
    const q = c.req.valid('query');
    const query = {
      category: q.category,
      search: q.search,
      fields: q.fields ?? TOOL_FIELDS,
      limit: q.limit ?? LIST_LIMIT_DEFAULT,
      offset: q.offset ?? 0,
    };
    const { tools, total } = await listTools(catalogue(c), query);
    return c.json(
      envelope(c, tools, { total, category: query.category ?? 'all', limit: query.limit, offset: query.offset }),
      200,
    );
  });

  app.openapi(getToolRoute, async (c) => {
    const { slug } = c.req.valid('param');
    const tool = await getTool(catalogue(c), slug);
    if (tool === null)
      throw new ApiError('not_found', `no tool has the slug "${slug.slice(0, 100)}"; list them with GET /api/v1/tools`);
    return c.json(envelope(c, tool as z.infer<typeof Tool>), 200);
  });

  app.openapi(categoriesRoute, async (c) => {
    const categories = await listCategories(catalogue(c));
    return c.json(envelope(c, categories, { total: categories.length }), 200);
  });
}
