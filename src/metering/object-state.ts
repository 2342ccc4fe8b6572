// A Durable Object's SQLite state as plain JSON, for the operator's backup and restore
// (docs/self-hosting.md): every table the object made (schema and rows) and its pending alarm. Taken inside one
// synchronous transaction, so an object's export is consistent with itself. Objects keep no KV state.

/** A BLOB cell, which JSON cannot carry as such. */
export interface BlobCell {
  $blob: string;
}
export type Cell = string | number | null | BlobCell;

export interface TableState {
  name: string;
  /** The CREATE TABLE statement, as SQLite stored it. */
  sql: string;
  columns: string[];
  rows: Cell[][];
}

export interface ObjectState {
  tables: TableState[];
  alarm: number | null;
}

// The runtime's own tables (`_cf_…`) and SQLite's are not the object's data.
const USER_TABLES =
  "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export function encodeCell(value: unknown): Cell {
  if (value instanceof ArrayBuffer) return { $blob: btoa(String.fromCharCode(...new Uint8Array(value))) };
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  return String(value);
}

export function decodeCell(value: Cell): SqlStorageValue {
  if (value !== null && typeof value === 'object')
    return Uint8Array.from(atob(value.$blob), (c) => c.charCodeAt(0)).buffer;
  return value;
}

export async function exportObjectState(ctx: DurableObjectState): Promise<ObjectState> {
  const sql = ctx.storage.sql;
  const tables = ctx.storage.transactionSync(() =>
    sql
      .exec<{ name: string; sql: string }>(USER_TABLES)
      .toArray()
      .map(({ name, sql: create }) => {
        const cursor = sql.exec(`SELECT * FROM ${quoteIdent(name)}`);
        const rows = [...cursor.raw()].map((row) => row.map(encodeCell));
        return { name, sql: create, columns: cursor.columnNames, rows };
      }),
  );
  return { tables, alarm: await ctx.storage.getAlarm() };
}

/** Replaces the object's state with `state`: its tables are made if missing, emptied, then filled. */
export async function importObjectState(ctx: DurableObjectState, state: ObjectState): Promise<void> {
  const sql = ctx.storage.sql;
  ctx.storage.transactionSync(() => {
    for (const t of state.tables) {
      sql.exec(t.sql.replace(/^CREATE TABLE (?!IF NOT EXISTS)/i, 'CREATE TABLE IF NOT EXISTS '));
      sql.exec(`DELETE FROM ${quoteIdent(t.name)}`);
      if (t.columns.length === 0) continue;
      const insert = `INSERT INTO ${quoteIdent(t.name)} (${t.columns.map(quoteIdent).join(', ')}) VALUES (${t.columns.map(() => '?').join(', ')})`;
      for (const row of t.rows) sql.exec(insert, ...row.map(decodeCell));
    }
  });
  if (state.alarm !== null) await ctx.storage.setAlarm(state.alarm);
}
