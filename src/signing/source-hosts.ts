// The hosts an account's image URLs may fetch from (empty: any host the URL rules allow), in D1.
// Replaced as a whole: the list is short and read as one.

const SQL = {
  list: 'SELECT host FROM image_source_hosts WHERE account_id = ? ORDER BY host',
  clear: 'DELETE FROM image_source_hosts WHERE account_id = ?',
  insert: 'INSERT INTO image_source_hosts (account_id, host) VALUES (?, ?)',
} as const;

export const listSourceHostsStatement = (db: D1Database, accountId: string): D1PreparedStatement =>
  db.prepare(SQL.list).bind(accountId);

export async function listSourceHosts(db: D1Database, accountId: string): Promise<string[]> {
  const { results } = await listSourceHostsStatement(db, accountId).all<{ host: string }>();
  return results.map((r) => r.host);
}

/** Replaces the list in one batch (a transaction in D1), so a reader sees the old list or the new one. */
export async function replaceSourceHosts(
  db: D1Database,
  accountId: string,
  hosts: readonly string[],
): Promise<string[]> {
  const unique = [...new Set(hosts)].sort();
  await db.batch([
    db.prepare(SQL.clear).bind(accountId),
    ...unique.map((h) => db.prepare(SQL.insert).bind(accountId, h)),
  ]);
  return unique;
}
