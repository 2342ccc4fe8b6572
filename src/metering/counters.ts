// Window counters, compression reservations and per-day history, kept in a Durable Object's SQLite storage.
// Every method is synchronous: a caller that does check-then-add without awaiting in between is atomic,
// because a Durable Object runs one event at a time.
import { leaseOfReservation, reservationOf } from './lease.ts';
import { DAY_MS } from './windows.ts';

/** Days of per-day history each key keeps (the console shows 30). */
export const DAILY_HISTORY_DAYS = 40;

export type DailyRow = {
  day: number;
  requests: number;
  compressions: number;
};

/** A reservation older than this is treated as abandoned (its request died) and frees its unit. */
export const RESERVATION_TTL_MS = 5 * 60_000;

/** The marks of an ended lease's holds: a reservation still to settle, or a unit counted as used. */
const HELD = '#';
const SPENT = '$';

export class Counters {
  private readonly storage: SqlStorage;
  private ready = false;
  private prunedFor = 0;

  constructor(sql: SqlStorage) {
    this.storage = sql;
  }

  // Tables are made on first use, i.e. only once a key has authenticated: a guessed, unknown key must
  // leave no storage behind, or key-guessing would be a way to fill ours.
  private get sql(): SqlStorage {
    if (!this.ready) {
      this.storage.exec(`CREATE TABLE IF NOT EXISTS windows (
        name TEXT PRIMARY KEY, start INTEGER NOT NULL, used INTEGER NOT NULL)`);
      this.storage.exec(`CREATE TABLE IF NOT EXISTS reservations (
        id TEXT PRIMARY KEY, month_start INTEGER NOT NULL, created_at INTEGER NOT NULL)`);
      // Per-day history for the console's usage chart, written in the same step as the windows.
      this.storage.exec(`CREATE TABLE IF NOT EXISTS daily (
        day INTEGER PRIMARY KEY, requests INTEGER NOT NULL DEFAULT 0, compressions INTEGER NOT NULL DEFAULT 0)`);
      this.ready = true;
    }
    return this.storage;
  }

  /** The first row of a statement's answer, if any. */
  private first<T extends Record<string, SqlStorageValue>>(query: string, ...args: SqlStorageValue[]): T | undefined {
    return this.sql.exec<T>(query, ...args).toArray()[0];
  }

  /** Units used in the window `name` that starts at `start` (0 once the stored window is an older one). */
  used(name: string, start: number): number {
    return (
      this.first<{ used: number }>('SELECT used FROM windows WHERE name = ? AND start = ?', name, start)?.used ?? 0
    );
  }

  add(name: string, start: number, units = 1): void {
    // SET expressions see the old row, so `start` on the right is the stored window's start. A unit of a
    // window that has ended (a lease's report, a reservation settled after the window turned) arrives
    // after the next window has begun counting: it is dropped, never allowed to replace the newer count.
    this.sql.exec(
      `INSERT INTO windows (name, start, used) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET
         used = CASE WHEN start = excluded.start THEN used + excluded.used ELSE excluded.used END,
         start = excluded.start
       WHERE excluded.start >= start`,
      name,
      start,
      units,
    );
  }

  /** Adds to a day's history; the first write of each day also drops days past DAILY_HISTORY_DAYS. */
  addDaily(column: 'requests' | 'compressions', day: number, units = 1): void {
    this.sql.exec(
      `INSERT INTO daily (day, ${column}) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET ${column} = ${column} + excluded.${column}`,
      day,
      units,
    );
    if (day <= this.prunedFor) return;
    this.sql.exec('DELETE FROM daily WHERE day < ?', day - DAILY_HISTORY_DAYS * DAY_MS);
    this.prunedFor = day;
  }

  /** The stored days from `fromDay` on, oldest first; days without use are absent. */
  history(fromDay: number): DailyRow[] {
    return this.sql
      .exec<DailyRow>('SELECT day, requests, compressions FROM daily WHERE day >= ? ORDER BY day', fromDay)
      .toArray();
  }

  /** Units of the month held by reservations (not those of holds already counted as used). */
  reserved(monthStart: number, now: number): number {
    const cut = now - RESERVATION_TTL_MS;
    return (
      this.first<{ n: number }>(
        `SELECT COUNT(*) AS n FROM reservations WHERE month_start = ? AND created_at > ? AND instr(id, '/${SPENT}') = 0`,
        monthStart,
        cut,
      )?.n ?? 0
    );
  }

  reserve(id: string, monthStart: number, now: number): void {
    this.sql.exec('DELETE FROM reservations WHERE created_at <= ?', now - RESERVATION_TTL_MS);
    this.sql.exec('INSERT INTO reservations (id, month_start, created_at) VALUES (?, ?, ?)', id, monthStart, now);
  }

  /**
   * Units of an ended lease of the month that may still be settled (src/metering/lease.ts), under
   * `<lease id>/#<n>`, or `<lease id>/$<n>` when already counted as used (`spent`), until take() settles
   * each or they expire.
   */
  holdLease(leaseId: string, monthStart: number, units: number, now: number, spent: boolean): void {
    for (let n = 1; n <= units; n++)
      this.reserve(reservationOf(leaseId, `${spent ? SPENT : HELD}${n}`), monthStart, now);
  }

  /**
   * Removes a reservation; null when it is unknown or expired. A reservation taken from a lease
   * (`<lease id>/<n>`) that the lease's end left held takes one of its holds (`spent`: counted as used).
   */
  take(id: string, now: number): { month: number; spent: boolean } | null {
    const lease = reservationOf(leaseOfReservation(id), '');
    const row = this.first<{ id: string; month_start: number }>(
      `DELETE FROM reservations WHERE id = (SELECT id FROM reservations WHERE created_at > ?
         AND (id = ? OR substr(id, 1, ?) IN (?, ?)) ORDER BY id = ? DESC LIMIT 1) RETURNING id, month_start`,
      now - RESERVATION_TTL_MS,
      id,
      lease.length + 1,
      lease + HELD,
      lease + SPENT,
      id,
    );
    return row ? { month: row.month_start, spent: row.id !== id && row.id.startsWith(lease + SPENT) } : null;
  }
}
