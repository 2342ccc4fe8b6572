// Reads the tool catalogue from D1. Every query is parameterised and answered from an index: category
// and name orders from `tools_by_category` / `tools_by_name`, substring search from the trigram index
// `tools_search` (see migration 0002). Nothing here knows about HTTP.

export const TOOL_FIELDS = ['slug', 'name', 'description', 'url', 'tag', 'category', 'keyword'] as const;
export type ToolField = (typeof TOOL_FIELDS)[number];
export type ToolRecord = Partial<Record<ToolField, string>>;

/** The trigram index matches substrings of at least this many characters; shorter ones are scanned. */
export const TRIGRAM_MIN_CHARS = 3;

const COLUMN: Record<ToolField, string> = {
  slug: 'slug',
  name: 'name',
  description: 'description',
  url: 'path',
  tag: 'tag',
  category: 'category',
  keyword: 'keyword',
};

export interface ToolQuery {
  category?: string | undefined;
  search?: string | undefined;
  fields: readonly ToolField[];
  limit: number;
  offset: number;
}

export interface Catalogue {
  db: D1Database;
  /** TOOLS_SITE_URL without a trailing slash; a tool's url is this plus its path. */
  siteUrl: string;
}

type Row = Record<string, string>;

function columnsFor(fields: readonly ToolField[]): string {
  return [...new Set(fields.map((f) => COLUMN[f]))].join(', ');
}

function toRecord(row: Row, fields: readonly ToolField[], siteUrl: string): ToolRecord {
  const record: ToolRecord = {};
  for (const field of fields) {
    const value = row[COLUMN[field]] ?? '';
    record[field] = field === 'url' ? siteUrl + value : value;
  }
  return record;
}

/** `%`, `_` and the escape character itself are literal in a search term. */
const likePattern = (term: string): string => `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

/** An FTS5 phrase: quoted, quotes doubled, so every character of the term is matched literally. */
const ftsPhrase = (term: string): string => `"${term.replaceAll('"', '""')}"`;

function searchCondition(term: string): { sql: string; params: string[] } {
  if ([...term].length >= TRIGRAM_MIN_CHARS) {
    return { sql: 'id IN (SELECT rowid FROM tools_search WHERE tools_search MATCH ?)', params: [ftsPhrase(term)] };
  }
  const pattern = likePattern(term);
  return { sql: "(name LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\')", params: [pattern, pattern] };
}

export function listQuerySql(query: ToolQuery): { select: string; count: string; params: string[] } {
  const conditions: string[] = [];
  const params: string[] = [];
  if (query.category !== undefined) {
    conditions.push('category = ? COLLATE NOCASE');
    params.push(query.category);
  }
  if (query.search !== undefined) {
    const search = searchCondition(query.search);
    conditions.push(search.sql);
    params.push(...search.params);
  }
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
  return {
    select: `SELECT ${columnsFor(query.fields)} FROM tools${where} ORDER BY name COLLATE NOCASE LIMIT ? OFFSET ?`,
    count: `SELECT count(*) AS total FROM tools${where}`,
    params,
  };
}

/** One page of matching tools and the number of all matches, read in one round trip. */
export async function listTools(cat: Catalogue, query: ToolQuery): Promise<{ tools: ToolRecord[]; total: number }> {
  const sql = listQuerySql(query);
  const [page, count] = await cat.db.batch<Row>([
    cat.db.prepare(sql.select).bind(...sql.params, query.limit, query.offset),
    cat.db.prepare(sql.count).bind(...sql.params),
  ]);
  const total = Number((count?.results[0] as unknown as { total: number } | undefined)?.total ?? 0);
  return { tools: (page?.results ?? []).map((row) => toRecord(row, query.fields, cat.siteUrl)), total };
}

export async function getTool(cat: Catalogue, slug: string): Promise<ToolRecord | null> {
  const row = await cat.db
    .prepare(`SELECT ${columnsFor(TOOL_FIELDS)} FROM tools WHERE slug = ?`)
    .bind(slug)
    .first<Row>();
  return row === null ? null : toRecord(row, TOOL_FIELDS, cat.siteUrl);
}

export interface CategoryCount {
  category: string;
  count: number;
}

export const CATEGORIES_SQL =
  'SELECT category, count(*) AS count FROM tools GROUP BY category COLLATE NOCASE ORDER BY category COLLATE NOCASE';

export async function listCategories(cat: Catalogue): Promise<CategoryCount[]> {
  const { results } = await cat.db.prepare(CATEGORIES_SQL).all<CategoryCount>();
  return results.map((r) => ({ category: r.category, count: Number(r.count) }));
}
