// The operator's backup and restore of a running instance (docs/self-hosting.md): every D1 table and
// the state of every metering and webhook Durable Object, as one JSON document.
//
// D1 is read in one batch, i.e. one transaction: the tables agree with each other. Each object's state is
// read in one transaction of its own, right after; an object is found through D1 (a key meter by its key's
// hash, an account meter and a webhook dispatcher by the account id), since Durable Objects cannot be
// listed. Requests served between the two reads can make a counter one step ahead of D1; for a backup
// that matches to the request, stop traffic at the load balancer first.
import type { Env } from '../env.ts';
import { accountMeter } from '../metering/account-meter-stub.ts';
import { keyMeter } from '../metering/key-meter-stub.ts';
import {
  encodeCell,
  decodeCell,
  quoteIdent,
  type Cell,
  type ObjectState,
  type TableState,
} from '../metering/object-state.ts';
import { dispatcher } from '../webhooks/dispatcher-stub.ts';

export const BACKUP_FORMAT = 'shrinkray-backup';
export const BACKUP_VERSION = 1;

export interface Backup {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  taken_at: string;
  /** Names of the D1 migrations the data was written under; a restore needs the very same schema. */
  migrations: string[];
  d1: TableState[];
  objects: {
    key_meters: Record<string, ObjectState>;
    account_meters: Record<string, ObjectState>;
    webhook_dispatchers: Record<string, ObjectState>;
  };
}

export interface BackupSummary {
  tables: Record<string, number>;
  key_meters: number;
  account_meters: number;
  webhook_dispatchers: number;
}

/** An error the operator can act on; the route turns it into a 4xx. */
export class RestoreRefused extends Error {}

// Not data: wrangler's migration ledger (compared, not copied) and full-text indexes with their shadow
// tables, which the `tools` triggers rebuild as rows are restored.
const TABLES_SQL =
  "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name <> 'd1_migrations' ORDER BY name";

async function dataTables(db: D1Database): Promise<{ name: string; sql: string }[]> {
  const { results } = await db.prepare(TABLES_SQL).all<{ name: string; sql: string }>();
  const virtual = results.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name);
  return results.filter((t) => !virtual.some((v) => t.name === v || t.name.startsWith(`${v}_`)));
}

async function migrationNames(db: D1Database): Promise<string[]> {
  const { results } = await db.prepare('SELECT name FROM d1_migrations ORDER BY id').all<{ name: string }>();
  return results.map((r) => r.name);
}

const nonEmpty = (s: ObjectState): boolean => s.alarm !== null || s.tables.some((t) => t.rows.length > 0);

export async function takeBackup(env: Env, now: number): Promise<Backup> {
  const tables = await dataTables(env.DB);
  const [ledger, ...reads] = await env.DB.batch([
    env.DB.prepare('SELECT name FROM d1_migrations ORDER BY id'),
    ...tables.map((t) => env.DB.prepare(`SELECT * FROM ${quoteIdent(t.name)}`)),
  ]);
  const d1: TableState[] = tables.map((t, i) => {
    const rows = (reads[i]?.results ?? []) as Record<string, unknown>[];
    const columns = rows[0] ? Object.keys(rows[0]) : [];
    return { name: t.name, sql: t.sql, columns, rows: rows.map((r) => columns.map((c) => encodeCell(r[c]))) };
  });
  const column = (table: string, name: string): string[] => {
    const t = d1.find((x) => x.name === table);
    const i = t?.columns.indexOf(name) ?? -1;
    return t && i >= 0 ? t.rows.map((r) => String(r[i])) : [];
  };
  const hashes = column('api_keys', 'hash');
  const accounts = column('accounts', 'id');
  const collect = async (
    ids: string[],
    read: (id: string) => Promise<ObjectState>,
  ): Promise<Record<string, ObjectState>> => {
    const states = await Promise.all(ids.map(async (id) => [id, await read(id)] as const));
    return Object.fromEntries(states.filter(([, s]) => nonEmpty(s)));
  };
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    taken_at: new Date(now).toISOString(),
    migrations: ((ledger?.results ?? []) as { name: string }[]).map((r) => r.name),
    d1,
    objects: {
      key_meters: await collect(hashes, (h) => keyMeter(env, h).exportState()),
      account_meters: await collect(accounts, (a) => accountMeter(env, a).exportState()),
      webhook_dispatchers: await collect(accounts, (a) => dispatcher(env, a).exportState()),
    },
  };
}

export function summarize(backup: Backup): BackupSummary {
  return {
    tables: Object.fromEntries(backup.d1.map((t) => [t.name, t.rows.length])),
    key_meters: Object.keys(backup.objects.key_meters).length,
    account_meters: Object.keys(backup.objects.account_meters).length,
    webhook_dispatchers: Object.keys(backup.objects.webhook_dispatchers).length,
  };
}

/**
 * Loads a backup into an instance that holds no accounts yet (a fresh data directory): D1 in one batch
 * (all or nothing), then every object. Refuses a backup of another schema, or a non-empty instance.
 */
export async function restoreBackup(env: Env, backup: Backup): Promise<BackupSummary> {
  const objects = backup.objects as Partial<Backup['objects']> | undefined;
  if (
    backup.format !== BACKUP_FORMAT ||
    backup.version !== BACKUP_VERSION ||
    !Array.isArray(backup.migrations) ||
    !Array.isArray(backup.d1) ||
    typeof objects !== 'object' ||
    objects === null
  ) {
    throw new RestoreRefused(`not a ${BACKUP_FORMAT} version ${BACKUP_VERSION} document`);
  }
  const here = await migrationNames(env.DB);
  if (here.join(',') !== backup.migrations.join(',')) {
    throw new RestoreRefused(
      `the backup was taken under migrations [${backup.migrations.join(', ')}], this instance has [${here.join(', ')}]: restore with the same version`,
    );
  }
  const accounts = await env.DB.prepare('SELECT count(*) AS n FROM accounts').first<{ n: number }>();
  if ((accounts?.n ?? 0) > 0)
    throw new RestoreRefused('this instance already has accounts: restore into an empty data directory');
  const known = new Set((await dataTables(env.DB)).map((t) => t.name));
  const unknown = backup.d1.find((t) => !known.has(t.name));
  if (unknown) throw new RestoreRefused(`the backup has a table ${unknown.name} this instance does not`);

  // Foreign keys are checked at commit, so tables may be filled in any order.
  const statements: D1PreparedStatement[] = [env.DB.prepare('PRAGMA defer_foreign_keys = true')];
  for (const t of backup.d1) {
    statements.push(env.DB.prepare(`DELETE FROM ${quoteIdent(t.name)}`));
    if (t.columns.length === 0) continue;
    const insert = `INSERT INTO ${quoteIdent(t.name)} (${t.columns.map(quoteIdent).join(', ')}) VALUES (${t.columns.map(() => '?').join(', ')})`;
    for (const row of t.rows) statements.push(env.DB.prepare(insert).bind(...row.map(toD1Value)));
  }
  try {
    await env.DB.batch(statements);
  } catch (err) {
    // All or nothing: the instance is still empty.
    throw new RestoreRefused(
      `D1 refused the backup's rows, nothing was restored: ${err instanceof Error ? err.message : String(err)}`,
    );
  }

  const load = (
    states: Record<string, ObjectState>,
    stub: (id: string) => { importState(s: ObjectState): Promise<void> },
  ) => Promise.all(Object.entries(states).map(([id, s]) => stub(id).importState(s)));
  await load(objects.key_meters ?? {}, (h) => keyMeter(env, h));
  await load(objects.account_meters ?? {}, (a) => accountMeter(env, a));
  await load(objects.webhook_dispatchers ?? {}, (a) => dispatcher(env, a));
  return summarize({ ...backup, objects: { key_meters: {}, account_meters: {}, webhook_dispatchers: {}, ...objects } });
}

function toD1Value(cell: Cell): unknown {
  return cell !== null && typeof cell === 'object' ? decodeCell(cell) : cell;
}
