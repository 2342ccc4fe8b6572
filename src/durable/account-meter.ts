// One instance per account, addressed by the account id: API A's month of compressions, which belongs to
// the account (all its keys together, and the console's "Try it" meter). Only key meters call it (a
// Durable Object has no route from the Internet), after they have authenticated the key, so it trusts
// the account id and tier it is given. The tier comes with every call: the key meters hold it (loaded
// from D1, refreshed after a tier change), and this object keeps no state but its counters.
//
// Every method is synchronous inside: a Durable Object runs one event at a time, so check-and-reserve
// is atomic and the month is exact however many keys reserve at once.
import { DurableObject } from 'cloudflare:workers';
import type { ImageTier } from '../accounts/tiers.ts';
import type { Env } from '../env.ts';
import { Counters } from '../metering/counters.ts';
import {
  commitCompression, imageStatus, monthUsage, releaseCompression, reserveCompression,
  type CommitResult, type ImageResult,
} from '../metering/rules.ts';
import type { WindowUsage } from '../metering/types.ts';

export class AccountMeter extends DurableObject<Env> {
  private readonly counters: Counters;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.counters = new Counters(ctx.storage.sql);
  }

  /** Holds one unit of this month for a compression about to run, under the id the key meter chose. */
  async reserve(tier: ImageTier, now: number, id: string): Promise<ImageResult> {
    return this.ctx.storage.transactionSync(() => reserveCompression(this.counters, tier, now, id));
  }

  async commit(tier: ImageTier, id: string, now: number): Promise<CommitResult> {
    return this.ctx.storage.transactionSync(() => commitCompression(this.counters, tier, now, id));
  }

  async release(tier: ImageTier, id: string, now: number): Promise<ImageResult> {
    return this.ctx.storage.transactionSync(() => releaseCompression(this.counters, tier, now, id));
  }

  /** The month as it stands, as the X-RateLimit-* headers say it. Spends nothing. */
  async status(tier: ImageTier, now: number): Promise<ImageResult> {
    return imageStatus(this.counters, tier, now);
  }

  /** The month as /account and the console show it. Spends nothing. */
  async month(tier: ImageTier, now: number): Promise<WindowUsage> {
    return monthUsage(this.counters, tier, now);
  }
}
