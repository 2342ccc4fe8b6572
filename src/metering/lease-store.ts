// The home's leases in its Durable Object's SQLite storage, and the view of its counters in which lent
// units count as used. Tables are made on first use, as Counters' are: a key that never leased keeps none.
import { Counters } from './counters.ts';
import type { HomePorts } from './lease-home.ts';
import type { HomeLedger, LeaseRecord, LeaseReport, LeaseStore, WindowCounts } from './lease.ts';

export class SqlLeaseStore implements LeaseStore {
  private readonly storage: SqlStorage;
  private cache: Map<string, LeaseRecord> | undefined;
  private currentEpoch: number | undefined;

  constructor(sql: SqlStorage) {
    this.storage = sql;
  }

  private get sql(): SqlStorage {
    if (this.cache === undefined) {
      this.storage.exec('CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
      this.storage.exec('CREATE TABLE IF NOT EXISTS lease_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)');
      this.cache = new Map(
        this.storage
          .exec<{ id: string; body: string }>('SELECT id, body FROM leases')
          .toArray()
          .map((r) => [r.id, JSON.parse(r.body) as LeaseRecord]),
      );
    }
    return this.storage;
  }

  records(): LeaseRecord[] {
    void this.sql;
    return [...(this.cache as Map<string, LeaseRecord>).values()];
  }

  put(record: LeaseRecord): void {
    this.sql.exec('INSERT OR REPLACE INTO leases (id, body) VALUES (?, ?)', record.id, JSON.stringify(record));
    this.cache?.set(record.id, record);
  }

  delete(id: string): void {
    this.sql.exec('DELETE FROM leases WHERE id = ?', id);
    this.cache?.delete(id);
  }

  epoch(): number {
    this.currentEpoch ??= Number(this.meta('epoch') ?? 0);
    return this.currentEpoch;
  }

  setEpoch(epoch: number): void {
    this.setMeta('epoch', String(epoch));
    this.currentEpoch = epoch;
  }

  /** The key's hash, which names its lease holders (a revocation may come before any request since a restart). */
  meta(name: string): string | undefined {
    return this.sql.exec<{ value: string }>('SELECT value FROM lease_meta WHERE name = ?', name).toArray()[0]?.value;
  }

  setMeta(name: string, value: string): void {
    this.sql.exec('INSERT OR REPLACE INTO lease_meta (name, value) VALUES (?, ?)', name, value);
  }

  /** Forgets what it read (after a restore replaced the tables). */
  reset(): void {
    this.cache = undefined;
    this.currentEpoch = undefined;
  }
}

/** The key's counters as a synchronous spend must see them: units lent to locations count as used. */
export class HeldCounters extends Counters {
  private readonly ledger: () => HomeLedger;

  constructor(sql: SqlStorage, ledger: () => HomeLedger) {
    super(sql);
    this.ledger = ledger;
  }

  override used(name: string, start: number): number {
    return super.used(name, start) + this.ledger().held(name, start);
  }
}

/**
 * The month's counts as its home's ledger sees them: reservations count as used (a slice is lent only
 * from what no compression holds), and what an ended lease may still settle is held under its id, at
 * request time `now()`: as reservations, or, for a lease nobody answered for, as compressions already
 * counted (a release gives its unit back).
 */
export function monthCounts(
  counters: Pick<Counters, 'used' | 'add' | 'reserved' | 'holdLease'>,
  now: () => number,
): WindowCounts {
  return {
    used: (name, start) => counters.used(name, start) + counters.reserved(start, now()),
    add: (name, start, units) => counters.add(name, start, units),
    hold: (name, start, leaseId, units, spent) => {
      if (spent) counters.add(name, start, units);
      counters.holdLease(leaseId, start, units, now(), spent);
    },
  };
}

/** A home Durable Object's ports: its clock and storage, and `surrender` to reach a holder. */
export function objectPorts(
  ctx: DurableObjectState,
  surrender: (location: string, epoch?: number) => Promise<LeaseReport[]>,
): HomePorts {
  return {
    clock: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    atomically: (fn) => ctx.storage.transactionSync(fn),
    recall: (location) => surrender(location),
    revoke: (location, epoch) => surrender(location, epoch),
    newId: () => crypto.randomUUID(),
  };
}
