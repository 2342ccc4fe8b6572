// Brings the `tools` table in line with the catalogue file: two statements, run as one batch, each taking
// the whole catalogue as a single JSON parameter. Re-running them changes nothing (unchanged rows are
// not even rewritten), and a tool removed from the file disappears from D1. The Worker tests bind the
// parameter; the CLI inlines it (see `inlineParams`), so both run the very same SQL.
import type { Statement } from './statements.ts';
import type { ToolSeed } from '../catalogue/tools-data.ts';

const COLUMNS = ['slug', 'name', 'description', 'path', 'tag', 'category', 'keyword'] as const;

/** D1 refuses SQL statements longer than 100,000 bytes; the inlined catalogue must stay below it. */
export const D1_MAX_STATEMENT_BYTES = 100_000;

const removeDropped = "DELETE FROM tools WHERE slug NOT IN (SELECT json_extract(value, '$.slug') FROM json_each(?))";

// `WHERE true` is SQLite's required disambiguation between an upsert's SELECT and its ON CONFLICT.
const upsertAll =
  `INSERT INTO tools (${COLUMNS.join(', ')}) ` +
  `SELECT ${COLUMNS.map((c) => `json_extract(value, '$.${c}')`).join(', ')} FROM json_each(?) WHERE true ` +
  `ON CONFLICT (slug) DO UPDATE SET ${COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')} ` +
  `WHERE ${COLUMNS.map((c) => `tools.${c} IS NOT excluded.${c}`).join(' OR ')}`;

export function catalogueSeedStatements(tools: readonly ToolSeed[]): Statement[] {
  const json = JSON.stringify(tools.map((t) => Object.fromEntries(COLUMNS.map((c) => [c, t[c]]))));
  // Removal first, so a tool renamed under a new slug does not collide with its old row's unique name.
  return [
    { sql: removeDropped, params: [json] },
    { sql: upsertAll, params: [json] },
  ];
}
