// The webhook side of a metering Durable Object: which once-per-window events have fired, and an outbox
// of events waiting to be handed to the account's dispatcher. Both live in the meter's own SQLite storage
// and are written inside the same transactionSync as the counter that caused them, so an event exists
// exactly when its counter change does, however many requests race. Every method is synchronous.
import { DAY_MS } from '../metering/windows.ts';
import { event, type EventType, type WebhookEvent } from './events.ts';

/** Fired markers are kept this long: longer than the longest window (a month). */
const FIRED_KEEP_MS = 40 * DAY_MS;

export class MeterOutbox {
  private readonly storage: SqlStorage;
  private ready = false;

  constructor(sql: SqlStorage) {
    this.storage = sql;
  }

  // Made on first use, like the counters: only a meter that has something to say gets these tables.
  private get sql(): SqlStorage {
    if (!this.ready) {
      this.storage.exec(`CREATE TABLE IF NOT EXISTS webhook_fired (
        name TEXT NOT NULL, window_start INTEGER NOT NULL, PRIMARY KEY (name, window_start))`);
      this.storage.exec(`CREATE TABLE IF NOT EXISTS webhook_outbox (
        id TEXT PRIMARY KEY, account_id TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)`);
      this.ready = true;
    }
    return this.storage;
  }

  /** True the first time `name` fires in the window starting at `windowStart`, false ever after. */
  fireOnce(name: string, windowStart: number): boolean {
    const inserted = this.sql
      .exec(
        'INSERT INTO webhook_fired (name, window_start) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING name',
        name,
        windowStart,
      )
      .toArray();
    if (inserted.length === 0) return false;
    this.sql.exec('DELETE FROM webhook_fired WHERE window_start < ?', windowStart - FIRED_KEEP_MS);
    return true;
  }

  record(accountId: string, type: EventType, at: number, data: Record<string, unknown>): WebhookEvent {
    const e = event(accountId, type, at, data);
    this.sql.exec(
      'INSERT INTO webhook_outbox (id, account_id, type, body, created_at) VALUES (?, ?, ?, ?, ?)',
      e.id,
      e.accountId,
      e.type,
      e.body,
      e.createdAt,
    );
    return e;
  }

  pending(): WebhookEvent[] {
    if (!this.hasTable()) return [];
    return this.sql
      .exec<{ id: string; account_id: string; type: EventType; body: string; created_at: number }>(
        'SELECT id, account_id, type, body, created_at FROM webhook_outbox ORDER BY created_at, id',
      )
      .toArray()
      .map((r) => ({ id: r.id, accountId: r.account_id, type: r.type, body: r.body, createdAt: r.created_at }));
  }

  remove(ids: string[]): void {
    for (const id of ids) this.sql.exec('DELETE FROM webhook_outbox WHERE id = ?', id);
  }

  private hasTable(): boolean {
    if (this.ready) return true;
    return (
      this.storage.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhook_outbox'").toArray()
        .length > 0
    );
  }
}
