// GET /tools, /tools/{slug}, /categories against the seeded catalogue. Expected answers are computed
// from the catalogue file itself, so the tests check the SQL, not a copy of its output.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATEGORIES, TOOLS, type ToolSeed } from '../../src/catalogue/tools-data.ts';
import { call, expectEachRefused, makeKey, toolsHeaders, type Refusal, type TestKey } from './helpers.ts';

let k: TestKey;
beforeAll(async () => {
  // Enterprise: 10,000 a minute, so the many calls here never meet the rate limit.
  k = await makeKey({ tools: 'enterprise' });
});

async function get(path: string) {
  const res = await call(path, { headers: toolsHeaders(k.key) });
  return { res, body: await res.json<any>() };
}

const byName = (a: ToolSeed, b: ToolSeed) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1);
const matches = (t: ToolSeed, term: string) => `${t.name}\n${t.description}`.toLowerCase().includes(term.toLowerCase());
const slugsOf = (tools: readonly ToolSeed[]) => [...tools].sort(byName).map((t) => t.slug);
const record = (t: ToolSeed) => ({
  slug: t.slug,
  name: t.name,
  description: t.description,
  url: env.TOOLS_SITE_URL + t.path,
  tag: t.tag,
  category: t.category,
  keyword: t.keyword,
});

describe('GET /api/v1/tools', () => {
  it('lists the first 100 tools by name, every field, with meta.total, category "all" and the tier', async () => {
    const { res, body } = await get('/api/v1/tools');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(body.meta).toMatchObject({
      total: TOOLS.length,
      category: 'all',
      tier: 'enterprise',
      limit: 100,
      offset: 0,
    });
    const expected = [...TOOLS].sort(byName).slice(0, 100);
    expect(body.data).toEqual(expected.map(record));
  });

  it('filters by category case-insensitively and echoes the filter as given', async () => {
    const pdf = TOOLS.filter((t) => t.category === 'PDF');
    for (const given of ['PDF', 'pdf', 'Pdf']) {
      const { body } = await get(`/api/v1/tools?category=${given}`);
      expect(body.meta).toMatchObject({ total: pdf.length, category: given });
      expect(body.data.map((t: any) => t.slug)).toEqual(slugsOf(pdf));
    }
  });

  it('searches name and description case-insensitively, as a substring', async () => {
    for (const term of ['pdf', 'PDF', 'Convert', 'json f', 'qr', 'x', 'calculat']) {
      const { body } = await get(`/api/v1/tools?search=${encodeURIComponent(term)}&limit=500`);
      const expected = TOOLS.filter((t) => matches(t, term));
      expect(expected.length, term).toBeGreaterThan(0);
      expect(body.meta.total, term).toBe(expected.length);
      expect(
        body.data.map((t: any) => t.slug),
        term,
      ).toEqual(slugsOf(expected));
    }
  });

  it('treats %, _, quotes and backslashes in a search literally', async () => {
    for (const term of ['%', '_', '%%', 'a_b', '"', '\\', 'pdf"', '" OR 1', "it's"]) {
      const { res, body } = await get(`/api/v1/tools?search=${encodeURIComponent(term)}`);
      expect(res.status, term).toBe(200);
      expect(body.meta.total, term).toBe(TOOLS.filter((t) => matches(t, term)).length);
    }
  });

  it('combines category and search', async () => {
    const { body } = await get('/api/v1/tools?category=converters&search=pdf');
    const expected = TOOLS.filter((t) => t.category === 'Converters' && matches(t, 'pdf'));
    expect(expected.length).toBeGreaterThan(0);
    expect(body.meta).toMatchObject({ total: expected.length, category: 'converters' });
    expect(body.data.map((t: any) => t.slug)).toEqual(slugsOf(expected));
  });

  it('answers an empty result with 200, total 0 and an empty list, not 404', async () => {
    for (const query of ['search=zzqqxx', 'category=Astrology', 'category=PDF&search=calculator']) {
      const { res, body } = await get(`/api/v1/tools?${query}`);
      expect(res.status, query).toBe(200);
      expect(body.data, query).toEqual([]);
      expect(body.meta.total, query).toBe(0);
    }
  });

  it('treats blank category and search as absent, and trims them', async () => {
    const blank = await get('/api/v1/tools?category=&search=%20%20&limit=1');
    expect(blank.body.meta).toMatchObject({ total: TOOLS.length, category: 'all' });
    const padded = await get('/api/v1/tools?category=%20PDF%20&limit=1');
    expect(padded.body.meta).toMatchObject({
      total: TOOLS.filter((t) => t.category === 'PDF').length,
      category: 'PDF',
    });
  });

  it('projects one field, or several in the order asked, and nothing else', async () => {
    const one = await get('/api/v1/tools?fields=name&limit=3');
    expect(one.body.data).toEqual(
      [...TOOLS]
        .sort(byName)
        .slice(0, 3)
        .map((t) => ({ name: t.name })),
    );
    const several = await get('/api/v1/tools?fields=url,%20slug,url&category=SEO&limit=2');
    const seo = [...TOOLS]
      .filter((t) => t.category === 'SEO')
      .sort(byName)
      .slice(0, 2);
    expect(several.body.data).toEqual(seo.map((t) => ({ url: env.TOOLS_SITE_URL + t.path, slug: t.slug })));
    for (const row of several.body.data) expect(Object.keys(row)).toEqual(['url', 'slug']);
  });

  it('refuses unknown or empty field names, naming the valid ones', async () => {
    for (const fields of ['price', 'name,price', 'name,', 'NAME', 'path']) {
      const { res, body } = await get(`/api/v1/tools?fields=${fields}`);
      expect(res.status, fields).toBe(400);
      expect(body.error.code).toBe('bad_request');
      expect(body.error.param).toBe('fields');
      expect(body.error.message).toContain('valid fields: slug, name, description, url, tag, category, keyword');
    }
  });

  it('pages with limit and offset; total counts every match', async () => {
    const all = (await get('/api/v1/tools?fields=slug&limit=500')).body.data.map((t: any) => t.slug);
    expect(all).toHaveLength(TOOLS.length);
    const first = await get('/api/v1/tools?fields=slug&limit=7');
    const second = await get('/api/v1/tools?fields=slug&limit=7&offset=7');
    expect([...first.body.data, ...second.body.data].map((t: any) => t.slug)).toEqual(all.slice(0, 14));
    expect(second.body.meta).toMatchObject({ total: TOOLS.length, limit: 7, offset: 7 });
    const past = await get(`/api/v1/tools?offset=${TOOLS.length}`);
    expect(past.res.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta.total).toBe(TOOLS.length);
  });

  it('refuses out-of-range or malformed limit and offset with 400 naming the parameter', async () => {
    const cases: Refusal[] = [
      [
        'limit',
        'limit must be an integer from 1 to 500',
        'limit=0',
        'limit=501',
        'limit=abc',
        'limit=1.5',
        'limit=1e2',
        'limit=',
      ],
      ['offset', 'offset must be an integer from 0 to 100000', 'offset=-1', 'offset=100001'],
    ];
    const send = (query: string) => call(`/api/v1/tools?${query}`, { headers: toolsHeaders(k.key) });
    for (const [param, message, ...queries] of cases) await expectEachRefused(queries, send, { param, message });
    // A repeated parameter is refused too, saying so, not which type it expected.
    await expectEachRefused(['limit=5&limit=6'], send, { param: 'limit', message: 'limit must be given once' });
    await expectEachRefused(['search=a&search=b'], send, { param: 'search', message: 'search must be given once' });
  });

  it('refuses long search and category terms, unknown parameters and malformed encoding', async () => {
    const long = await get(`/api/v1/tools?search=${'a'.repeat(101)}`);
    expect(long.body.error).toMatchObject({ param: 'search', message: 'search must be at most 100 characters' });
    const cat = await get(`/api/v1/tools?category=${'a'.repeat(51)}`);
    expect(cat.body.error).toMatchObject({ param: 'category' });
    const unknown = await get('/api/v1/tools?page=2');
    expect(unknown.res.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      param: 'page',
      message: 'unknown parameter "page"; allowed: category, search, fields, limit, offset',
    });
    const bad = await get('/api/v1/tools?search=%E0%A4');
    expect(bad.res.status).toBe(400);
    expect(bad.body.error.param).toBe('search');
  });

  it('needs a key and counts every call, errors included', async () => {
    expect((await call('/api/v1/tools')).status).toBe(401);
    const free = await makeKey();
    const a = await call('/api/v1/tools?limit=1', { headers: toolsHeaders(free.key) });
    const b = await call('/api/v1/tools?limit=0', { headers: toolsHeaders(free.key) });
    expect(a.headers.get('x-ratelimit-remaining')).toBe('99');
    expect(b.status).toBe(400);
    expect(b.headers.get('x-ratelimit-remaining')).toBe('98');
  });
});

describe('GET /api/v1/tools/{slug}', () => {
  it('returns the whole record', async () => {
    const tool = TOOLS.find((t) => t.slug === 'merge-pdf')!;
    const { res, body } = await get('/api/v1/tools/merge-pdf');
    expect(res.status).toBe(200);
    expect(body.data).toEqual(record(tool));
    expect(body.meta.tier).toBe('enterprise');
  });

  it('matches the slug case-insensitively', async () => {
    expect((await get('/api/v1/tools/Merge-PDF')).body.data.slug).toBe('merge-pdf');
  });

  it('answers 404 not_found for an unknown slug', async () => {
    for (const slug of ['no-such-tool', 'merge%20pdf', 'x'.repeat(300)]) {
      const { res, body } = await get(`/api/v1/tools/${slug}`);
      expect(res.status, slug).toBe(404);
      expect(body.error.code).toBe('not_found');
    }
  });
});

describe('GET /api/v1/categories', () => {
  it('lists every category with its count, by name', async () => {
    const { res, body } = await get('/api/v1/categories');
    expect(res.status).toBe(200);
    const expected = [...CATEGORIES]
      .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1))
      .map((category) => ({ category, count: TOOLS.filter((t) => t.category === category).length }));
    expect(body.data).toEqual(expected);
    expect(body.meta).toMatchObject({ total: CATEGORIES.length, tier: 'enterprise' });
  });
});
