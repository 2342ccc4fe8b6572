// What a Durable Object that is the home of leases keeps (docs/design.md, "Leases"): the key meter for a
// key's windows, the account meter for the month. Both hold their counters, the leases they lend them
// under and the webhook events born there in their own SQLite storage, wired the same way.
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.ts';
import { Counters } from './counters.ts';
import type { HomePorts } from './lease-home.ts';
import { HeldCounters, objectPorts, SqlLeaseStore } from './lease-store.ts';
import { HomeLedger, type LeaseReport, type WindowCounts } from './lease.ts';
import { MeterOutbox } from '../webhooks/meter-outbox.ts';

export abstract class LeaseHomeObject extends DurableObject<Env> {
  protected readonly counters: Counters;
  /** The leases this object's windows are lent under: the authority over what is lent. */
  protected readonly leases: SqlLeaseStore;
  protected readonly ledger: HomeLedger;
  /** The counters a spend or reservation here must respect: units lent to locations count as used. */
  protected readonly held: HeldCounters;
  protected readonly ports: HomePorts;
  /** Webhook events born here (thresholds crossed, first 429s), waiting for the hand-off. */
  protected readonly outbox: MeterOutbox;

  /**
   * `counts`: how the ledger sees the counters; `surrender`: asks the holder at a location to give its
   * lease back. Both are called only after construction.
   */
  constructor(
    ctx: DurableObjectState,
    env: Env,
    counts: (counters: Counters) => WindowCounts,
    surrender: (location: string, epoch?: number) => Promise<LeaseReport[]>,
  ) {
    super(ctx, env);
    this.counters = new Counters(ctx.storage.sql);
    this.outbox = new MeterOutbox(ctx.storage.sql);
    this.leases = new SqlLeaseStore(ctx.storage.sql);
    this.ledger = new HomeLedger(counts(this.counters), this.leases);
    this.held = new HeldCounters(ctx.storage.sql, () => this.ledger);
    this.ports = objectPorts(ctx, surrender);
  }
}
