// Self-hosting: D1 on workerd. workerd has no D1 of its own, but its D1 client (the internal module
// `cloudflare-internal:d1-api`, the very code behind `env.DB` on Cloudflare) talks to its database through
// an inner service binding. This file is that service: one SQLite-storage Durable Object holding the whole
// database on the local disk, and the entrypoint the client calls. The app's `env.DB` keeps its interface
// (prepare/bind/first/all/run/batch), so no route or service changes.
//
// The migrations apply when the object starts, before it answers any query (there is no startup hook in
// Workers; the object's constructor is the first code to touch the database), tracked in `d1_migrations`
// exactly as wrangler tracks them; then the tool catalogue syncs. The config generator (build.ts) passes
// the migration files in as the MIGRATIONS JSON binding, so a new bundle carries its own schema.
import { DurableObject, WorkerEntrypoint } from 'cloudflare:workers';
import { TOOLS } from '../catalogue/tools-data.ts';
import { catalogueSeedStatements } from '../db/catalogue-seed.ts';

export interface Migration {
  name: string;
  sql: string;
}

interface D1Env {
  DATABASE: DurableObjectNamespace<D1DatabaseObject>;
  MIGRATIONS: Migration[];
}

type Value = number | string | null | number[];
interface Query {
  sql: string;
  params?: Value[] | null;
}
interface Meta {
  served_by: string;
  served_by_primary: boolean;
  duration: number;
  changes: number;
  last_row_id: number;
  changed_db: boolean;
  size_after: number;
  rows_read: number;
  rows_written: number;
}
interface RawResult {
  columns: string[];
  rows: Value[][];
  meta: Meta;
}

/** The name of the one database object: one database per instance, as `DB` is one database. */
const DATABASE_NAME = 'DB';
const SERVED_BY = 'shrinkray-selfhost';

// wrangler's own table, so `wrangler d1 migrations list` semantics (and an operator's eyes) carry over.
const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS d1_migrations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`;

export class D1DatabaseObject extends DurableObject<D1Env> {
  constructor(ctx: DurableObjectState, env: D1Env) {
    super(ctx, env);
    // Nothing is served until the schema is current: a failure here fails every query (and /readyz).
    void ctx.blockConcurrencyWhile(async () => {
      this.migrate();
      this.syncCatalogue();
    });
  }

  private migrate(): void {
    const sql = this.ctx.storage.sql;
    sql.exec(MIGRATIONS_TABLE);
    const applied = new Set(
      sql
        .exec<{ name: string }>('SELECT name FROM d1_migrations')
        .toArray()
        .map((r) => r.name),
    );
    for (const m of [...this.env.MIGRATIONS].sort((a, b) => a.name.localeCompare(b.name))) {
      if (applied.has(m.name)) continue;
      this.ctx.storage.transactionSync(() => {
        sql.exec(m.sql);
        sql.exec('INSERT INTO d1_migrations (name) VALUES (?)', m.name);
      });
      console.log(`event=migration_applied migration=${m.name}`);
    }
  }

  private syncCatalogue(): void {
    this.ctx.storage.transactionSync(() => {
      for (const s of catalogueSeedStatements(TOOLS)) this.ctx.storage.sql.exec(s.sql, ...s.params);
    });
  }

  /** Runs the queries as one transaction (D1's batch semantics): all take effect or none does. */
  run(queries: Query[]): RawResult[] {
    const live = queries.filter((q) => q.sql.replace(/^\s*--.*$/gm, '').trim() !== '');
    if (live.length === 0) throw new Error('No SQL statements detected.');
    return this.ctx.storage.transactionSync(() => live.map((q) => this.one(q)));
  }

  private one(q: Query): RawResult {
    const sql = this.ctx.storage.sql;
    const before = this.totals();
    const sizeBefore = sql.databaseSize;
    const started = performance.now();
    const params = (q.params ?? []).map((p) => (Array.isArray(p) ? new Uint8Array(p).buffer : p));
    const cursor = sql.exec(q.sql, ...params);
    const rows = [...cursor.raw()].map(
      (row) => row.map((v) => (v instanceof ArrayBuffer ? [...new Uint8Array(v)] : v)) as Value[],
    );
    const duration = performance.now() - started;
    const after = this.totals();
    const changes = after.changes - before.changes;
    return {
      columns: cursor.columnNames,
      rows,
      meta: {
        served_by: SERVED_BY,
        served_by_primary: true,
        duration,
        changes,
        last_row_id: after.lastRowId,
        changed_db: changes !== 0 || after.lastRowId !== before.lastRowId || sql.databaseSize !== sizeBefore,
        size_after: sql.databaseSize,
        rows_read: cursor.rowsRead,
        rows_written: cursor.rowsWritten,
      },
    };
  }

  private totals(): { changes: number; lastRowId: number } {
    const row = this.ctx.storage.sql
      .exec<{ c: number; r: number }>('SELECT total_changes() AS c, last_insert_rowid() AS r')
      .one();
    return { changes: row.c, lastRowId: row.r };
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * What the D1 client calls: `query` over RPC, or POST /query|/execute over HTTP, whichever protocol the
 * client of this workerd version speaks. Both reach the same object.
 */
export default class D1Entry extends WorkerEntrypoint<D1Env> {
  private stub() {
    return this.env.DATABASE.get(this.env.DATABASE.idFromName(DATABASE_NAME));
  }

  async query(request: { queries: Query[]; bookmark?: string }) {
    try {
      const results = await this.stub().run(request.queries);
      return {
        results: results.map(({ meta, columns, rows }) => ({ meta, data: { kind: 'raw' as const, columns, rows } })),
      };
    } catch (err) {
      const error = new Error(errorMessage(err));
      error.name = 'D1_ERROR';
      throw error;
    }
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method !== 'POST' || !['/query', '/execute'].includes(url.pathname))
      return new Response('not found', { status: 404 });
    const body = (await request.json()) as Query | Query[];
    const queries = Array.isArray(body) ? body : [body];
    try {
      const results = await this.stub().run(queries);
      const objects =
        url.searchParams.get('resultsFormat') !== 'ROWS_AND_COLUMNS' &&
        url.searchParams.get('resultsFormat') !== 'NONE';
      return Response.json(
        results.map(({ meta, columns, rows }) => ({
          success: true,
          meta,
          results: objects ? rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]]))) : { columns, rows },
        })),
      );
    } catch (err) {
      return Response.json({ success: false, error: errorMessage(err) });
    }
  }
}
