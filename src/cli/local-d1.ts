// The local D1 opened in this process: the same SQLite file `wrangler dev` and `wrangler d1 execute --local`
// use (same database id, same persistence directory), through wrangler's own platform proxy. Each
// `wrangler d1 …` command is a Node, wrangler and workerd start of seconds of CPU; `npm run dev` opens
// this once for its migrations and its seed and closes it before `wrangler dev` starts.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Statement } from '../db/statements.ts';
import { CliError, redactSecrets } from './errors.ts';
import type { unstable_readConfig } from 'wrangler';
import { D1Error, PROJECT_ROOT, type D1Executor, type D1Target, type Row } from './wrangler.ts';

const DATABASE = 'DB';
/** wrangler's default name of the table that records applied migrations. */
const DEFAULT_MIGRATIONS_TABLE = 'd1_migrations';

/** As much of the D1 binding as we use (the Workers types are not in the Node project). */
interface D1Binding {
  prepare(sql: string): { bind(...values: unknown[]): unknown };
  batch(statements: unknown[]): Promise<{ results?: Row[] }[]>;
}

export interface LocalD1 {
  /** Runs statements as one batch (all or nothing), as `wrangler d1 execute` does. */
  executor: D1Executor;
  /** Applies the migrations not yet recorded, as `wrangler d1 migrations apply --local` does; returns their names. */
  migrate(): Promise<string[]>;
  dispose(): Promise<void>;
}

/** The fields of a `[[d1_databases]]` entry we read (wrangler's own types reach us loosely typed). */
interface D1DatabaseConfig {
  binding: string;
  database_name?: string;
  database_id?: string;
  preview_database_id?: string;
  migrations_dir?: string;
  migrations_table?: string;
  migrations_pattern?: string;
}

interface DatabaseConfig {
  /** Set when the configuration names a pattern of migration files, which `migrate` does not follow. */
  migrationsPattern: string | undefined;
  id: string;
  migrationsDir: string;
  migrationsTable: string;
  persistence: string;
  compatibilityDate: string | undefined;
}

/** What wrangler itself resolves for `d1 … DB --local [--persist-to] [--config]`. */
function databaseConfig(target: D1Target, readConfig: typeof unstable_readConfig): DatabaseConfig {
  const configPath = resolve(target.config ?? join(PROJECT_ROOT, 'wrangler.toml'));
  const config = readConfig({ config: configPath });
  const databases: readonly D1DatabaseConfig[] = config.d1_databases;
  const db = databases.find((d) => d.binding === DATABASE || d.database_name === DATABASE);
  if (db === undefined) throw new CliError(`no D1 database bound as ${DATABASE} in ${configPath}`);
  return {
    migrationsPattern: db.migrations_pattern === undefined ? undefined : `migrations_pattern in ${configPath}`,
    id: db.preview_database_id ?? db.database_id ?? db.binding,
    migrationsDir: resolve(dirname(configPath), db.migrations_dir ?? 'migrations'),
    migrationsTable: db.migrations_table ?? DEFAULT_MIGRATIONS_TABLE,
    persistence:
      target.persistTo === undefined ? join(dirname(configPath), '.wrangler', 'state') : resolve(target.persistTo),
    compatibilityDate: config.compatibility_date,
  };
}

const leadingNumber = (name: string): number => Number.parseInt(name.split('_')[0] ?? '', 10);

/** The `*.sql` files in wrangler's order: by leading number, then by name. */
export function migrationNames(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.sql') && !e.name.startsWith('.'))
      .map((e) => e.name);
  } catch {
    return [];
  }
  return names.sort((a, b) => {
    const [na, nb] = [leadingNumber(a), leadingNumber(b)];
    if (na !== nb && Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
    if (na !== nb && (Number.isFinite(na) || Number.isFinite(nb))) return Number.isFinite(na) ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

/** wrangler's and workerd's failures as the one-line, redacted error the CLIs print. */
function localFailure(err: unknown, target: D1Target, context = ''): CliError {
  if (err instanceof CliError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new D1Error(redactSecrets(`${context}${message}`.replace(/\s+/g, ' ').trim()).slice(0, 600), target);
}

const quoteIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Opens the local database of `target` (never a remote one). A configuration holding only the database
 * (same id, so the same file) keeps the proxy from starting the Worker and its Durable Objects.
 */
export async function openLocalD1(target: D1Target): Promise<LocalD1> {
  if (target.remote) throw new CliError('the in-process D1 is the local database only');
  // Its warnings (e.g. about proxy variables) would mix into a command's output, as `wrangler d1 execute`'s
  // never did (its output was read, not shown): only errors, unless the developer asked for a level.
  const logLevel = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG ??= 'error';
  // Loaded on first use: wrangler's module takes seconds to load, which a usage error need not wait for.
  const { getPlatformProxy, unstable_readConfig, unstable_splitSqlQuery } = await import('wrangler');
  const dir = mkdtempSync(join(tmpdir(), 'shrinkray-local-d1-'));
  let db: DatabaseConfig;
  let proxy: Awaited<ReturnType<typeof getPlatformProxy<{ DB: D1Binding }>>>;
  try {
    db = databaseConfig(target, unstable_readConfig);
    const config = join(dir, 'wrangler.json');
    writeFileSync(
      config,
      JSON.stringify({
        name: 'shrinkray-local-d1',
        compatibility_date: db.compatibilityDate ?? '2026-11-01',
        d1_databases: [{ binding: DATABASE, database_id: db.id }],
      }),
    );
    // wrangler keeps a persistence directory's data under its v3/; the proxy takes that directory itself.
    proxy = await getPlatformProxy<{ DB: D1Binding }>({
      configPath: config,
      persist: { path: join(db.persistence, 'v3') },
    });
  } catch (err) {
    throw localFailure(err, target);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    // `wrangler dev`, started next with this environment, logs as usual.
    if (logLevel === undefined) delete process.env.WRANGLER_LOG;
  }
  const binding = proxy.env.DB;
  const batch: D1Executor = async (statements) => {
    const results = await binding.batch(statements.map((s) => binding.prepare(s.sql).bind(...s.params)));
    return results.map((r) => r.results ?? []);
  };
  const table = quoteIdentifier(db.migrationsTable);
  return {
    executor: batch,
    async migrate() {
      // wrangler 4 reads one flat directory unless a pattern says otherwise; a pattern is not ours.
      if (db.migrationsPattern !== undefined) throw new CliError(`${db.migrationsPattern} is not supported here`);
      // The same table, columns and rows as wrangler's, so `wrangler d1 migrations list/apply` agree.
      const [, applied = []] = await batch([
        {
          sql: `CREATE TABLE IF NOT EXISTS ${table}(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`,
          params: [],
        },
        { sql: `SELECT name FROM ${table} ORDER BY id`, params: [] },
      ]).catch((err: unknown) => {
        throw localFailure(err, target);
      });
      const done = new Set(applied.map((r) => String(r.name)));
      const pending = migrationNames(db.migrationsDir).filter((name) => !done.has(name));
      for (const name of pending) {
        // One batch per migration, its record included: a failing migration leaves no trace.
        try {
          const sql = `${readFileSync(join(db.migrationsDir, name), 'utf8')}\nINSERT INTO ${table} (name)\nvalues ('${name.replace(/'/g, "''")}');`;
          await batch(unstable_splitSqlQuery(sql).map((q): Statement => ({ sql: q, params: [] })));
        } catch (err) {
          throw localFailure(err, target, `migration ${name} failed: `);
        }
      }
      return pending;
    },
    dispose: () => proxy.dispose(),
  };
}
