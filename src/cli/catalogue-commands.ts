// `catalogue sync`: brings D1's tool catalogue in line with src/catalogue/tools-data.ts. `npm run dev`
// runs the same step locally and `npm run deploy` runs it remotely, after the migrations.
import { TOOLS } from '../catalogue/tools-data.ts';
import { catalogueSeedStatements } from '../db/catalogue-seed.ts';
import type { Command } from './command.ts';
import type { Statement } from '../db/statements.ts';
import { d1Execute, type D1Target, type Row } from './wrangler.ts';

const COUNT_SQL = 'SELECT count(*) AS tools, count(DISTINCT category) AS categories FROM tools';

/** The seed and a count, as one batch's statements (`npm run dev` runs them in its own first batch). */
export function catalogueSyncStatements(): Statement[] {
  return [...catalogueSeedStatements(TOOLS), { sql: COUNT_SQL, params: [] }];
}

/** What D1 holds after the batch of catalogueSyncStatements, from that batch's results. */
export function catalogueCounts(results: readonly Row[][]): { tools: number; categories: number } {
  const row = results.at(-1)?.[0] ?? {};
  return { tools: Number(row.tools), categories: Number(row.categories) };
}

/** Runs the seed and a count in one batch; returns what D1 holds afterwards. */
export async function syncCatalogue(target: D1Target): Promise<{ tools: number; categories: number }> {
  return catalogueCounts(await d1Execute(target, catalogueSyncStatements()));
}

export const catalogueSync: Command = {
  group: 'catalogue',
  name: 'sync',
  synopsis: '',
  flags: [],
  positionals: [],
  prepare(input) {
    return async () => ({ output: { synced: true, ...(await syncCatalogue(input.target)) } });
  },
};
