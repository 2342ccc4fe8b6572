// One instance per account, addressed by the account id: Image API's month of compressions, which belongs to
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
  commitCompression,
  imageStatus,
  monthUsage,
  releaseCompression,
  reserveCompression,
  type CommitResult,
  type ImageResult,
} from '../metering/rules.ts';
import type { WindowUsage } from '../metering/types.ts';
import { handOff } from '../webhooks/dispatcher-stub.ts';
import { imageRefused, imageThresholds, type HookTarget } from '../webhooks/meter-events.ts';
import { MeterOutbox } from '../webhooks/meter-outbox.ts';
import { exportObjectState, importObjectState, type ObjectState } from './object-state.ts';

export class AccountMeter extends DurableObject<Env> {
  private readonly counters: Counters;
  /** Webhook events born here (the month's thresholds, each key's first 429 of the month). */
  private readonly outbox: MeterOutbox;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.counters = new Counters(ctx.storage.sql);
    this.outbox = new MeterOutbox(ctx.storage.sql);
  }

  /**
   * Holds one unit of this month for a compression about to run, under the id the key meter chose.
   * `hook` (the calling key, when the account has webhooks) makes a refusal a rate_limit.exceeded event.
   */
  async reserve(tier: ImageTier, now: number, id: string, hook?: HookTarget): Promise<ImageResult> {
    const { result, recorded } = this.ctx.storage.transactionSync(() => {
      const result = reserveCompression(this.counters, tier, now, id);
      return { result, recorded: !result.allowed && hook !== undefined && imageRefused(this.outbox, hook, tier, now) };
    });
    if (recorded) await this.ctx.storage.setAlarm(Date.now());
    return result;
  }

  /** Spends a reservation; with `hook`, crossing 80 % or 100 % of the month is a usage.threshold event. */
  async commit(tier: ImageTier, id: string, now: number, hook?: HookTarget): Promise<CommitResult> {
    const { result, recorded } = this.ctx.storage.transactionSync(() => {
      const result = commitCompression(this.counters, tier, now, id);
      return {
        result,
        recorded: result.charged && hook !== undefined && imageThresholds(this.outbox, this.counters, hook, tier, now),
      };
    });
    if (recorded) await this.ctx.storage.setAlarm(Date.now());
    return result;
  }

  /** Hands recorded webhook events to the account's dispatcher. */
  /** The operator's backup (docs/self-hosting.md): this object's tables and alarm. */
  async exportState(): Promise<ObjectState> {
    return exportObjectState(this.ctx);
  }

  /** The operator's restore: replaces this object's state with a backup's. */
  async importState(state: ObjectState): Promise<void> {
    await importObjectState(this.ctx, state);
  }

  override async alarm(): Promise<void> {
    await handOff(this.env, this.ctx.storage, this.outbox);
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
