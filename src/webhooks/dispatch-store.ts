// The dispatcher's own SQLite storage: messages (the exact body and id of each event), one delivery per
// (message, endpoint) with its state and next attempt, and every attempt made. Synchronous: the
// dispatcher's steps are atomic because a Durable Object runs one event at a time between awaits.
import type { EventType, WebhookEvent } from './events.ts';
import { DELIVERY_LOG_LIMIT } from './limits.ts';

export type DeliveryState = 'pending' | 'succeeded' | 'failed';

export type DueDelivery = {
  msg_id: string;
  endpoint_id: string;
  attempts: number;
  manual: number;
  body: string;
};

export type AttemptRow = {
  at: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
};

export interface DeliveryView {
  msg_id: string;
  type: EventType;
  created_at: string;
  state: DeliveryState;
  next_attempt_at: string | null;
  attempts: { at: string; status: number | null; error: string | null; duration_ms: number }[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

export class DispatchStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS messages (
      id TEXT PRIMARY KEY, type TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS deliveries (
      msg_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
      next_at INTEGER, manual INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (msg_id, endpoint_id))`);
    sql.exec('CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_at)');
    sql.exec('CREATE INDEX IF NOT EXISTS deliveries_endpoint ON deliveries (endpoint_id)');
    sql.exec(`CREATE TABLE IF NOT EXISTS attempts (
      msg_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, at INTEGER NOT NULL, status INTEGER, error TEXT, duration_ms INTEGER NOT NULL)`);
    sql.exec('CREATE INDEX IF NOT EXISTS attempts_delivery ON attempts (msg_id, endpoint_id, at)');
    sql.exec('CREATE TABLE IF NOT EXISTS manual_sends (at INTEGER NOT NULL)');
  }

  /**
   * Spends one of the hour's manual sends (tests, retries); false when `max` were spent in the last hour.
   * Returns the ms until one frees up as `retryAfter` when refused.
   */
  spendManual(now: number, max: number): { ok: boolean; retryAfterMs: number } {
    const hourAgo = now - 3_600_000;
    this.sql.exec('DELETE FROM manual_sends WHERE at <= ?', hourAgo);
    const rows = this.sql
      .exec<{ n: number; oldest: number | null }>('SELECT COUNT(*) AS n, MIN(at) AS oldest FROM manual_sends')
      .toArray()[0];
    if ((rows?.n ?? 0) >= max) return { ok: false, retryAfterMs: (rows?.oldest ?? now) + 3_600_000 - now };
    this.sql.exec('INSERT INTO manual_sends (at) VALUES (?)', now);
    return { ok: true, retryAfterMs: 0 };
  }

  get accountId(): string | null {
    return this.sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'account'").toArray()[0]?.v ?? null;
  }

  set accountId(id: string) {
    this.sql.exec("INSERT INTO meta (k, v) VALUES ('account', ?) ON CONFLICT (k) DO NOTHING", id);
  }

  /** Stores the message once (by id); false when it was already here, so a repeated hand-off adds nothing. */
  addMessage(e: Pick<WebhookEvent, 'id' | 'type' | 'body' | 'createdAt'>): boolean {
    const rows = this.sql
      .exec(
        'INSERT INTO messages (id, type, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id',
        e.id,
        e.type,
        e.body,
        e.createdAt,
      )
      .toArray();
    return rows.length === 1;
  }

  addDelivery(msgId: string, endpointId: string, nextAt: number): void {
    this.sql.exec(
      "INSERT INTO deliveries (msg_id, endpoint_id, state, next_at) VALUES (?, ?, 'pending', ?) ON CONFLICT DO NOTHING",
      msgId,
      endpointId,
      nextAt,
    );
  }

  /**
   * Due deliveries, the earliest of each endpoint not in `busy` (one attempt per endpoint at a time), at
   * most `limit`, earliest first.
   */
  due(now: number, limit: number, busy: readonly string[]): DueDelivery[] {
    return this.sql
      .exec<DueDelivery>(
        `SELECT msg_id, endpoint_id, attempts, manual, body FROM (
           SELECT d.msg_id, d.endpoint_id, d.attempts, d.manual, m.body, d.next_at,
                  ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_at, d.msg_id) AS n
           FROM deliveries d JOIN messages m ON m.id = d.msg_id
           WHERE d.state = 'pending' AND d.next_at <= ? AND d.endpoint_id NOT IN (SELECT value FROM json_each(?)))
         WHERE n = 1 ORDER BY next_at, msg_id LIMIT ?`,
        now,
        JSON.stringify(busy),
        limit,
      )
      .toArray();
  }

  /** The earliest pending attempt of the endpoints not in `busy`. */
  nextDue(busy: readonly string[] = []): number | null {
    return (
      this.sql
        .exec<{ t: number | null }>(
          "SELECT MIN(next_at) AS t FROM deliveries WHERE state = 'pending' AND endpoint_id NOT IN (SELECT value FROM json_each(?))",
          JSON.stringify(busy),
        )
        .toArray()[0]?.t ?? null
    );
  }

  recordAttempt(msgId: string, endpointId: string, attempt: AttemptRow): void {
    this.sql.exec(
      'INSERT INTO attempts (msg_id, endpoint_id, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)',
      msgId,
      endpointId,
      attempt.at,
      attempt.status,
      attempt.error,
      attempt.duration_ms,
    );
  }

  settle(msgId: string, endpointId: string, state: DeliveryState, attempts: number, nextAt: number | null): void {
    this.sql.exec(
      'UPDATE deliveries SET state = ?, attempts = ?, next_at = ?, manual = 0 WHERE msg_id = ? AND endpoint_id = ?',
      state,
      attempts,
      nextAt,
      msgId,
      endpointId,
    );
  }

  /** Gives up every pending delivery to an endpoint (disabled or deleted). */
  failPending(endpointId: string): void {
    this.sql.exec(
      "UPDATE deliveries SET state = 'failed', next_at = NULL WHERE endpoint_id = ? AND state = 'pending'",
      endpointId,
    );
  }

  hasDelivery(msgId: string, endpointId: string): boolean {
    return (
      this.sql.exec('SELECT 1 FROM deliveries WHERE msg_id = ? AND endpoint_id = ?', msgId, endpointId).toArray()
        .length === 1
    );
  }

  /** A manual retry: one more attempt now. False when the endpoint never had this message. */
  retry(msgId: string, endpointId: string, now: number): boolean {
    const rows = this.sql
      .exec(
        `UPDATE deliveries SET next_at = ?, manual = CASE WHEN state = 'pending' THEN manual ELSE 1 END, state = 'pending'
         WHERE msg_id = ? AND endpoint_id = ? RETURNING msg_id`,
        now,
        msgId,
        endpointId,
      )
      .toArray();
    return rows.length === 1;
  }

  forget(endpointId: string): void {
    this.sql.exec('DELETE FROM deliveries WHERE endpoint_id = ?', endpointId);
    this.sql.exec('DELETE FROM attempts WHERE endpoint_id = ?', endpointId);
  }

  log(endpointId: string): DeliveryView[] {
    const rows = this.sql
      .exec<{ msg_id: string; type: EventType; created_at: number; state: DeliveryState; next_at: number | null }>(
        `SELECT d.msg_id, m.type, m.created_at, d.state, d.next_at FROM deliveries d JOIN messages m ON m.id = d.msg_id
         WHERE d.endpoint_id = ? ORDER BY m.created_at DESC, d.msg_id LIMIT ?`,
        endpointId,
        DELIVERY_LOG_LIMIT,
      )
      .toArray();
    return rows.map((r) => ({
      msg_id: r.msg_id,
      type: r.type,
      created_at: iso(r.created_at),
      state: r.state,
      next_attempt_at: r.state === 'pending' && r.next_at !== null ? iso(r.next_at) : null,
      attempts: this.sql
        .exec<AttemptRow>(
          'SELECT at, status, error, duration_ms FROM attempts WHERE msg_id = ? AND endpoint_id = ? ORDER BY at',
          r.msg_id,
          endpointId,
        )
        .toArray()
        .map((a) => ({ at: iso(a.at), status: a.status, error: a.error, duration_ms: a.duration_ms })),
    }));
  }

  /** Drops messages older than the cutoff that nothing waits on, with their deliveries and attempts. */
  prune(before: number): void {
    this.sql.exec(
      `DELETE FROM messages WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.msg_id = messages.id AND d.state = 'pending')`,
      before,
    );
    this.sql.exec('DELETE FROM deliveries WHERE msg_id NOT IN (SELECT id FROM messages)');
    this.sql.exec('DELETE FROM attempts WHERE msg_id NOT IN (SELECT id FROM messages)');
  }
}
