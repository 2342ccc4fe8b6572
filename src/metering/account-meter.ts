// One instance per account, addressed by the account id: Image API's month of compressions, which belongs to
// the account (all its keys together, and the console's "Try it" meter). Only key meters call it (a
// Durable Object has no route from the Internet), after they have authenticated the key, so it trusts
// the account id and tier it is given. The tier comes with every call: the key meters hold it (loaded
// from D1, refreshed after a tier change), and this object keeps no state but its counters.
//
// Every method is synchronous inside: a Durable Object runs one event at a time, so check-and-reserve
// is atomic and the month is exact however many keys reserve at once. It is also the home of the month's
// leases (docs/design.md, "Leases"): each key's LeaseHolder at a location may hold a slice of the month,
// reserved there without a call here; a unit lent counts as taken until its location reports it.
import type { ImageTier } from '../accounts/tiers.ts';
import type { Env } from '../env.ts';
import type { ExchangeAnswer, ExchangeRequest } from './lease-client.ts';
import { recallOthers, serveExchange } from './lease-home.ts';
import { nearbyMeterNamed } from './lease-holder-stub.ts';
import { monthCounts } from './lease-store.ts';
import {
  commitCompression,
  imageStatus,
  monthUsage,
  monthWindows,
  releaseCompression,
  reserveCompression,
  type CommitResult,
  type ImageResult,
} from './rules.ts';
import { monthWindow } from './windows.ts';
import type { WindowUsage } from './types.ts';
import { handOff } from '../webhooks/dispatcher-stub.ts';
import { imageRefused, imageThresholds, type HookTarget } from '../webhooks/meter-events.ts';
import { LeaseHomeObject } from './lease-home-object.ts';
import { exportObjectState, importObjectState, type ObjectState } from './object-state.ts';

/** A reservation as a lease's synchronous spend answers it: the month's result and the id to settle it by. */
export type MonthVerdict = ImageResult & { reservation?: string };

/** The month's answer to a holder's exchange, with the compressions its reports newly counted. */
export type MonthExchange = ExchangeAnswer<MonthVerdict, undefined> & { counted: number };

export class AccountMeter extends LeaseHomeObject {
  /** The request time of the step under way: the time the month's holds are taken at. */
  private now = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    // A month lease's location is its holder's name (key hash @ location): the holder of each key's slice.
    super(
      ctx,
      env,
      (counters) => monthCounts(counters, () => this.now),
      (location) => nearbyMeterNamed(env, location).surrenderMonth(),
    );
  }

  /**
   * A lease holder's exchange for the month, forwarded by its key's meter once the key is authenticated:
   * its reports (the thresholds they cross are events), a reservation for each waiting compression
   * (slices lent elsewhere counted as taken, and recalled before a refusal), and its slice renewed.
   */
  async exchange(tier: ImageTier, request: ExchangeRequest, hook?: HookTarget): Promise<MonthExchange> {
    let recorded = false;
    let counted = 0;
    // What the holder's kept lease had lent before this exchange (0 if it has ended).
    let before = 0;
    const kept = request.reports.find((r) => r.keep)?.id;
    this.now = request.now;
    const answer = await serveExchange(
      this.ledger,
      this.ports,
      request,
      monthWindows(tier, request.now),
      this.ledger.epoch,
      undefined,
      () => {
        this.now = request.now;
        const id = crypto.randomUUID();
        const result = reserveCompression(this.held, tier, request.now, id);
        if (!result.allowed && hook) recorded = imageRefused(this.outbox, hook, tier, request.now) || recorded;
        // No `until`: a unit released elsewhere frees the month before it ends, so no refusal is remembered.
        return { verdict: result.allowed ? { ...result, reservation: id } : result, allowed: result.allowed };
      },
      (n) => {
        counted = n;
        if (n > 0 && hook) recorded = imageThresholds(this.outbox, this.counters, hook, tier, request.now);
        before = this.ledger.records().find((r) => r.id === kept)?.granted ?? 0;
      },
    );
    if (recorded) await this.ctx.storage.setAlarm(Date.now());
    // Each reservation's figure with the units just lent counted as taken too: its holder adds back what
    // its slice has free, so that it never says more is left than is.
    const lent = (answer.grant?.granted ?? 0) - before;
    const verdicts = answer.verdicts.map((v) =>
      v.allowed ? { ...v, rate: { ...v.rate, remaining: Math.max(0, v.rate.remaining - lent) } } : v,
    );
    return { ...answer, verdicts, counted };
  }

  /**
   * Holds one unit of this month for a compression about to run, under the id the key meter chose.
   * `hook` (the calling key, when the account has webhooks) makes a refusal a rate_limit.exceeded event.
   */
  async reserve(tier: ImageTier, now: number, id: string, hook?: HookTarget): Promise<ImageResult> {
    const attempt = (last: boolean) =>
      this.ctx.storage.transactionSync(() => {
        this.at(now);
        const result = reserveCompression(this.held, tier, now, id);
        const refusal = last && !result.allowed && hook !== undefined;
        return { result, recorded: refusal && imageRefused(this.outbox, hook, tier, now) };
      });
    // Before refusing, the slices lent to locations come back, as for a reservation a holder asks for:
    // a reservation with no location (signed image URLs) must not be refused while units lie idle there.
    const lent = () => this.ledger.records().some((r) => r.granted > r.reported);
    let { result, recorded } = attempt(!lent());
    if (!result.allowed && lent()) {
      await recallOthers(this.ledger, this.ports, '');
      ({ result, recorded } = attempt(true));
    }
    if (recorded) await this.ctx.storage.setAlarm(Date.now());
    return result;
  }

  /** Spends a reservation; with `hook`, crossing 80 % or 100 % of the month is a usage.threshold event. */
  async commit(tier: ImageTier, id: string, now: number, hook?: HookTarget): Promise<CommitResult> {
    const { result, recorded } = this.ctx.storage.transactionSync(() => {
      this.at(now);
      const result = commitCompression(this.held, tier, now, id, this.ledger);
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
    this.leases.reset();
  }

  override async alarm(): Promise<void> {
    await handOff(this.env, this.ctx.storage, this.outbox);
  }

  async release(tier: ImageTier, id: string, now: number): Promise<ImageResult> {
    return this.ctx.storage.transactionSync(() => {
      this.at(now);
      return releaseCompression(this.held, tier, now, id, this.ledger);
    });
  }

  /** Every step starts here: its request time, and the leases past their expiry taken back (held). */
  private at(now: number): void {
    this.now = now;
    this.ledger.expire(Date.now());
  }

  /** The month as it stands, as the X-RateLimit-* headers say it (lent units taken). Spends nothing. */
  async status(tier: ImageTier, now: number): Promise<ImageResult> {
    return this.ctx.storage.transactionSync(() => {
      this.at(now);
      return imageStatus(this.held, tier, now);
    });
  }

  /** The month as /account and the console show it (lent units taken). Spends nothing. */
  async month(tier: ImageTier, now: number): Promise<WindowUsage> {
    return this.ctx.storage.transactionSync(() => {
      this.at(now);
      return monthUsage(this.counters, tier, now, this.ledger.held('month', monthWindow(now).start));
    });
  }
}
