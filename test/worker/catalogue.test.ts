// The catalogue file, its seed, and the query plans behind the list endpoint.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { CATEGORIES_SQL, listQuerySql, TOOL_FIELDS, type ToolQuery } from '../../src/catalogue/catalogue.ts';
import { CATEGORIES, TAGS, TOOLS } from '../../src/catalogue/tools-data.ts';
import { catalogueSeedStatements, D1_MAX_STATEMENT_BYTES } from '../../src/db/catalogue-seed.ts';
import { inlineParams } from '../../src/db/statements.ts';

const seed = (tools = TOOLS) =>
  env.DB.batch(catalogueSeedStatements(tools).map((s) => env.DB.prepare(s.sql).bind(...s.params)));
const count = async () => (await env.DB.prepare('SELECT count(*) AS n FROM tools').first<{ n: number }>())!.n;

describe('the catalogue file', () => {
  it('has at least 80 tools in at least 8 categories, every field filled', () => {
    expect(TOOLS.length).toBeGreaterThanOrEqual(80);
    expect(new Set(TOOLS.map((t) => t.category)).size).toBeGreaterThanOrEqual(8);
    for (const c of CATEGORIES) expect(TOOLS.filter((t) => t.category === c).length, c).toBeGreaterThanOrEqual(10);
    for (const t of TOOLS) {
      expect(t.slug, t.slug).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
      expect(t.path, t.slug).toBe(`/${t.category.toLowerCase()}/${t.slug}`);
      expect(t.description, t.slug).toMatch(/^[A-Z].{40,}\.$/);
      expect(t.keyword.trim(), t.slug).not.toBe('');
      expect(TAGS, t.slug).toContain(t.tag);
    }
  });

  it('has unique slugs and names', () => {
    expect(new Set(TOOLS.map((t) => t.slug)).size).toBe(TOOLS.length);
    expect(new Set(TOOLS.map((t) => t.name.toLowerCase())).size).toBe(TOOLS.length);
  });
});

describe('the catalogue seed', () => {
  it('is idempotent: a second run writes nothing', async () => {
    const again = await seed();
    expect(again.map((r) => r.meta.changes)).toEqual([0, 0]);
    expect(await count()).toBe(TOOLS.length);
  });

  it('applies edits, removes dropped tools and restores them', async () => {
    const [first, ...rest] = TOOLS;
    const edited = rest.map((t, i) => (i === 0 ? { ...t, description: 'Edited for the test.' } : t));
    await seed(edited);
    expect(await count()).toBe(TOOLS.length - 1);
    expect(await env.DB.prepare('SELECT 1 FROM tools WHERE slug = ?').bind(first!.slug).first()).toBeNull();
    const hits = await env.DB.prepare(
      'SELECT count(*) AS n FROM tools_search WHERE tools_search MATCH \'"edited for the"\'',
    ).first<{ n: number }>();
    expect(hits!.n).toBe(1);
    await seed();
    expect(await count()).toBe(TOOLS.length);
    const gone = await env.DB.prepare(
      'SELECT count(*) AS n FROM tools_search WHERE tools_search MATCH \'"edited for the"\'',
    ).first<{ n: number }>();
    expect(gone!.n).toBe(0);
  });

  it("fits D1's statement length when the CLI inlines it", () => {
    for (const s of catalogueSeedStatements(TOOLS)) {
      expect(new TextEncoder().encode(inlineParams(s.sql, s.params)).byteLength).toBeLessThan(D1_MAX_STATEMENT_BYTES);
    }
  });
});

describe('query plans', () => {
  const plan = async (sql: string, params: unknown[]) =>
    (
      await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...params)
        .all<{ detail: string }>()
    ).results
      .map((r) => r.detail)
      .join(' | ');
  const base: ToolQuery = { fields: TOOL_FIELDS, limit: 10, offset: 0 };

  it('reads the unfiltered list in name order off the name index', async () => {
    const sql = listQuerySql(base);
    expect(await plan(sql.select, [10, 0])).toMatch(/SCAN tools USING INDEX tools_by_name/);
    expect(await plan(sql.select, [10, 0])).not.toMatch(/TEMP B-TREE/);
  });

  it('serves a category from the category index, already in name order', async () => {
    const sql = listQuerySql({ ...base, category: 'pdf' });
    const p = await plan(sql.select, [...sql.params, 10, 0]);
    expect(p).toMatch(/SEARCH tools USING INDEX tools_by_category \(category=\?\)/);
    expect(p).not.toMatch(/TEMP B-TREE/);
    expect(await plan(sql.count, sql.params)).toMatch(/USING COVERING INDEX tools_by_category/);
  });

  it('serves a search of three or more characters from the trigram index', async () => {
    const sql = listQuerySql({ ...base, search: 'pdf' });
    const p = await plan(sql.select, [...sql.params, 10, 0]);
    expect(p).toMatch(/VIRTUAL TABLE INDEX 0:M/);
    expect(p).toMatch(/SEARCH tools USING INTEGER PRIMARY KEY/);
  });

  it('reads categories off the category index', async () => {
    expect(await plan(CATEGORIES_SQL, [])).toMatch(/USING COVERING INDEX tools_by_category/);
  });
});
