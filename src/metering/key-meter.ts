// One instance per API key, addressed by the key's SHA-256 hash. It authenticates and meters in a single
// round trip: the key's state is held in memory (loaded from D1, dropped on `refresh`), the counters in
// this object's SQLite storage. Tools API's windows are the key's own; Image API's month belongs to the account,
// so compressions are reserved, committed and released on the account's meter (AccountMeter), which this
// object calls once the key has authenticated. The key keeps its per-day history of both.
import { digestsEqual } from '../accounts/constant-time.ts';
import type { KeyStateRow, KeyView } from '../accounts/records.ts';
import { parseScopes, type Scope } from '../accounts/tiers.ts';
import { SQL } from '../db/statements.ts';
import type { Env } from '../env.ts';
import type { ExchangeAnswer, ExchangeRequest } from './lease-client.ts';
import { revokeLeases, serveExchange } from './lease-home.ts';
import { holderName, nearbyMeter } from './lease-holder-stub.ts';
import type { LeaseReport } from './lease.ts';
import { KEY_STATE_TTL_MS, LAST_USED_FLUSH_MS } from './key-state.ts';
import {
  countFailedCompression,
  failedCompressions,
  FAILED_COMPRESSIONS_PER_MINUTE,
  meterManage,
  meterTools,
  toolsUsage,
  toolsWindows,
} from './rules.ts';
import { dayWindow } from './windows.ts';
import { accountMeter } from './account-meter-stub.ts';
import type { AccountMeter } from './account-meter.ts';
import type { KeySnapshot, Verdict } from './types.ts';
import { handOff } from '../webhooks/dispatcher-stub.ts';
import { hookTarget, toolsEvents } from '../webhooks/meter-events.ts';
import { LeaseHomeObject } from './lease-home-object.ts';
import { exportObjectState, importObjectState, type ObjectState } from './object-state.ts';

const tooManyFailures = `this key had ${FAILED_COMPRESSIONS_PER_MINUTE} uploads refused as unreadable or too large this minute`;

interface CachedKey {
  view: KeyView | null; // null: no such key
  revoked: boolean;
  loadedAt: number;
}

/** A lease holder's tools requests and reports, as one call. */
export interface LeaseCall {
  location: string;
  reports: LeaseReport[];
}

export class KeyMeter extends LeaseHomeObject {
  private cached: CachedKey | undefined;
  private loading: Promise<CachedKey> | undefined;
  private lastUsedAt: number | null = null;
  private lastFlushAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(
      ctx,
      env,
      (counters) => counters,
      (location, epoch) => this.holder(location).surrender(epoch),
    );
  }

  /**
   * Tools API. `count` is false only for /health. `withUsage` adds the full usage snapshot (/account).
   * `lease`: a lease holder's final reports, settled first so the snapshot counts its spends.
   */
  async tools(hash: string, now: number, count: boolean, withUsage = false, lease?: LeaseCall): Promise<Verdict> {
    const refused = await this.authenticate(hash, now, 'tools');
    if (refused.outcome !== 'ok' || !refused.key) return refused;
    const key = refused.key;
    if (lease) this.settleReports(key, lease, now);
    const { verdict, recorded } = this.ctx.storage.transactionSync(() => this.spendTools(key, now, count));
    if (recorded) await this.ctx.storage.setAlarm(Date.now());
    if (verdict.outcome !== 'ok') return verdict;
    this.touch(hash, now);
    if (withUsage) {
      const tools = toolsUsage(this.counters, key.tiers.tools, now);
      verdict.usage = { ...tools, month_compressions: await this.account(key).month(key.tiers.image, now) };
    }
    return verdict;
  }

  /**
   * A lease holder's exchange: its reports, one synchronous spend per waiting request (today's path,
   * with units lent elsewhere counted as used and recalled before a refusal), and its lease renewed.
   */
  async exchange(hash: string, request: ExchangeRequest): Promise<ExchangeAnswer<Verdict, KeyView>> {
    const epoch = this.ledger.epoch;
    const auth = await this.authenticate(hash, request.now, 'tools');
    // Revoked or changed while the state was read: read it again.
    if (this.ledger.epoch !== epoch) return this.exchange(hash, request);
    if (auth.outcome !== 'ok' || !auth.key) {
      // Refused: no lease; its reports still settle.
      if (auth.key) this.settleReports(auth.key, request, request.now);
      return { verdicts: Array.from({ length: request.spend }, () => auth), grant: null };
    }
    const key = auth.key;
    if (this.leases.meta('hash') !== hash) this.leases.setMeta('hash', hash);
    let counted = 0;
    let recorded = false;
    const answer = await serveExchange(
      this.ledger,
      this.ports,
      request,
      toolsWindows(key.tiers.tools, request.now),
      epoch,
      key,
      () => {
        const spent = this.spendTools(key, request.now, true);
        recorded ||= spent.recorded;
        const { verdict } = spent;
        return { verdict, allowed: verdict.outcome === 'ok', until: verdict.rate && verdict.rate.reset * 1000 };
      },
      (n) => {
        counted = n;
        recorded = this.reported(key, n, request.now);
      },
    );
    if (recorded) await this.ctx.storage.setAlarm(Date.now());
    if (counted > 0 || answer.verdicts.some((v) => v.outcome === 'ok')) this.touch(hash, request.now);
    return answer;
  }

  /**
   * A lease holder's exchange for the account's month (docs/design.md, "Leases"): this object authenticates
   * the key, lends the location its state (so that a revocation reaches it) and forwards the rest to the
   * account's meter, the month's home. A key that may not compress gets no slice, and the slice it held
   * is given back (its reservations still running stay held there until they settle).
   */
  async monthExchange(hash: string, request: ExchangeRequest): Promise<ExchangeAnswer<Verdict, KeyView>> {
    const epoch = this.ledger.epoch;
    const auth = await this.authenticate(hash, request.now, 'image');
    if (this.ledger.epoch !== epoch) return this.monthExchange(hash, request);
    const key = auth.key;
    const failures = key && auth.outcome === 'ok' ? failedCompressions(this.counters, request.now) : undefined;
    const refusal: Verdict | undefined =
      auth.outcome !== 'ok' || !key
        ? auth
        : failures?.allowed === false
          ? { outcome: 'rate_limit_exceeded', key, rate: failures.rate, reason: tooManyFailures }
          : undefined;
    const forward = { ...request, location: holderName(hash, request.location) };
    if (refusal || !key) {
      const reports = request.reports.map((r) => ({ ...r, keep: false }));
      // A revoked key's holder still gives its slice back: unreported, its unspent units would count as
      // compressions of the account's month when the lease expires.
      const owner = key ?? (await this.settleKey(hash, request.now));
      if (owner && reports.length > 0)
        await this.account(owner).exchange(owner.tiers.image, { ...forward, reports, want: 0, spend: 0 });
      return { verdicts: Array.from({ length: request.spend }, () => refusal ?? auth), grant: null };
    }
    if (this.leases.meta('hash') !== hash) this.leases.setMeta('hash', hash);
    this.ctx.storage.transactionSync(() =>
      this.ledger.lendState(request.location, Date.now(), () => crypto.randomUUID()),
    );
    const answer = await this.account(key).exchange(key.tiers.image, forward, hookTarget(key));
    if (answer.counted > 0)
      this.ctx.storage.transactionSync(() =>
        this.counters.addDaily('compressions', dayWindow(request.now).start, answer.counted),
      );
    const verdicts = answer.verdicts.map(
      (v): Verdict =>
        v.allowed
          ? { outcome: 'ok', key, rate: v.rate, reservation: v.reservation }
          : { outcome: 'quota_exceeded', key, rate: v.rate },
    );
    if (verdicts.some((v) => v.outcome === 'ok')) this.touch(hash, request.now);
    // The slice is lent under the key's state of `epoch`: a holder told of a later one drops it.
    return { verdicts, grant: answer.grant && { ...answer.grant, epoch }, state: key };
  }

  /** Image API without spending: the account's month as it stands (a read-only view for tests and operators). */
  async imageStatus(hash: string, now: number): Promise<Verdict> {
    const auth = await this.authenticate(hash, now, 'image');
    if (auth.outcome !== 'ok' || !auth.key) return auth;
    return {
      outcome: 'ok',
      key: auth.key,
      rate: (await this.account(auth.key).status(auth.key.tiers.image, now)).rate,
    };
  }

  /** Image API: holds one unit of the account's month for a compression about to run. */
  async reserve(hash: string, now: number): Promise<Verdict> {
    const auth = await this.authenticate(hash, now, 'image');
    if (auth.outcome !== 'ok' || !auth.key) return auth;
    const key = auth.key;
    const failures = this.ctx.storage.transactionSync(() => failedCompressions(this.counters, now));
    if (!failures.allowed) return { outcome: 'rate_limit_exceeded', key, rate: failures.rate, reason: tooManyFailures };
    const id = crypto.randomUUID();
    const result = await this.account(key).reserve(key.tiers.image, now, id, hookTarget(key));
    if (!result.allowed) return { outcome: 'quota_exceeded', key, rate: result.rate };
    this.touch(hash, now);
    return { outcome: 'ok', key, rate: result.rate, reservation: id };
  }

  /**
   * Spends the reserved unit on the account's month and, when it was spent, counts it in this key's day.
   * `quota_exceeded` when it could not be: the reservation expired and the month filled meanwhile, and
   * the compression must then not be served.
   */
  async commit(hash: string, reservation: string, now: number): Promise<Verdict> {
    const key = await this.settleKey(hash, now);
    if (!key) return { outcome: 'unauthorized' };
    const result = await this.account(key).commit(key.tiers.image, reservation, now, hookTarget(key));
    if (!result.charged) return { outcome: 'quota_exceeded', key, rate: result.rate };
    this.ctx.storage.transactionSync(() => this.counters.addDaily('compressions', dayWindow(now).start));
    return { outcome: 'ok', key, rate: result.rate };
  }

  /** As LeaseHolder.report: here every commit was counted when it was made. */
  async report(_hash: string): Promise<void> {}

  /** Gives the reserved unit back; `refusedImage` when the upload was refused after its image was read (counted per minute). */
  async release(hash: string, reservation: string, now: number, refusedImage = false): Promise<Verdict> {
    const key = await this.settleKey(hash, now);
    if (!key) return { outcome: 'unauthorized' };
    if (refusedImage) await this.countFailure(now);
    const result = await this.account(key).release(key.tiers.image, reservation, now);
    return { outcome: 'ok', key, rate: result.rate };
  }

  /** An upload refused after its image was read, whose reservation a lease holder released there. */
  async failed(hash: string, now: number): Promise<void> {
    if (await this.settleKey(hash, now)) await this.countFailure(now);
  }

  /**
   * Counts a refused upload. The one that fills the minute voids every lease of the key's state, so that
   * no location reserves from its slice of the month until the minute ends: each asks here, and is refused.
   */
  private async countFailure(now: number): Promise<void> {
    const filled = this.ctx.storage.transactionSync(() => {
      const before = failedCompressions(this.counters, now).allowed;
      countFailedCompression(this.counters, now);
      return before && !failedCompressions(this.counters, now).allowed;
    });
    if (filled && this.ledger.records().length > 0) await revokeLeases(this.ledger, this.ports);
  }

  /** The management API (keys, webhooks, …): the key must carry the `manage` scope; MANAGE_PER_MINUTE. */
  async manage(hash: string, now: number): Promise<Verdict> {
    const auth = await this.authenticate(hash, now, 'manage');
    if (auth.outcome !== 'ok' || !auth.key) return auth;
    const result = this.ctx.storage.transactionSync(() => meterManage(this.counters, now));
    if (!result.allowed) return { outcome: 'rate_limit_exceeded', key: auth.key, rate: result.rate };
    this.touch(hash, now);
    return { ...auth, rate: result.rate };
  }

  /** Hands recorded webhook events to the account's dispatcher; set by the step that recorded them. */
  /** The operator's backup (docs/self-hosting.md): this object's tables and alarm. */
  async exportState(): Promise<ObjectState> {
    return exportObjectState(this.ctx);
  }

  /** The operator's restore: replaces this object's state with a backup's. */
  async importState(state: ObjectState): Promise<void> {
    await importObjectState(this.ctx, state);
    this.leases.reset();
    this.cached = undefined;
    this.loading = undefined;
  }

  override async alarm(): Promise<void> {
    await handOff(this.env, this.ctx.storage, this.outbox);
  }

  /**
   * The console's view of this key: its Tools API windows as they stand and its per-day history from
   * `fromDay` (the month of compressions is the account's: read it from the account's meter). Spends
   * nothing and needs no scope; null for a hash with no key (then no storage is touched).
   */
  async snapshot(hash: string, now: number, fromDay: number): Promise<KeySnapshot | null> {
    const { view } = await this.load(hash, now);
    if (!view) return null;
    return { usage: toolsUsage(this.counters, view.tiers.tools, now), history: this.counters.history(fromDay) };
  }

  /**
   * Forget the cached key state: the next request re-reads it from D1 (revoke, tier change). Every lease
   * holder has stopped spending under the old state before this returns (docs/design.md, "Leases").
   */
  async refresh(): Promise<void> {
    this.cached = undefined;
    this.loading = undefined;
    await revokeLeases(this.ledger, this.ports);
    this.cached = undefined;
    this.loading = undefined;
  }

  /** One Tools API spend here: the rules over the held counters, and its webhook event in the same step. */
  private spendTools(key: KeyView, now: number, count: boolean): { verdict: Verdict; recorded: boolean } {
    const target = count ? hookTarget(key) : undefined;
    // The event, if any, commits with the counter that caused it: once per window however many race.
    // A refusal reads the held counters (lent units are gone); a threshold, the units really spent.
    const result = meterTools(this.held, key.tiers.tools, now, count);
    const recorded =
      target !== undefined &&
      toolsEvents(
        this.outbox,
        result.allowed ? this.counters : this.held,
        target,
        key.tiers.tools,
        now,
        result.allowed,
      );
    const verdict: Verdict = result.allowed
      ? { outcome: 'ok', key, rate: result.rate }
      : { outcome: 'rate_limit_exceeded', key, rate: result.rate };
    return { verdict, recorded };
  }

  /**
   * Counts what a holder reports spent, in the windows and the day's history, with the day's thresholds.
   * Returns the units newly counted.
   */
  private settleReports(key: KeyView, lease: LeaseCall, now: number): number {
    const { counted, recorded } = this.ctx.storage.transactionSync(() => {
      this.ledger.expire(Date.now());
      const counted = this.ledger.report(lease.location, lease.reports);
      return { counted, recorded: this.reported(key, counted, now) };
    });
    if (recorded) void this.ctx.storage.setAlarm(Date.now());
    return counted;
  }

  /** What a holder's reports newly counted adds to the day's history and the key's events; true: an event was recorded. */
  private reported(key: KeyView, counted: number, now: number): boolean {
    if (counted === 0) return false;
    this.counters.addDaily('requests', dayWindow(now).start, counted);
    const target = hookTarget(key);
    return target !== undefined && toolsEvents(this.outbox, this.counters, target, key.tiers.tools, now, true);
  }

  private holder(location: string) {
    return nearbyMeter(this.env, this.leases.meta('hash') ?? '', location);
  }

  private account(key: KeyView): DurableObjectStub<AccountMeter> {
    return accountMeter(this.env, key.account.id);
  }

  // A reservation settles even if the key was revoked meanwhile: the work was authorised when it began.
  private async settleKey(hash: string, now: number): Promise<KeyView | null> {
    return (await this.load(hash, now)).view;
  }

  private async authenticate(hash: string, now: number, scope: Scope): Promise<Verdict> {
    const state = await this.load(hash, now);
    if (!state.view) return { outcome: 'unauthorized', reason: 'unknown API key' };
    if (state.revoked) return { outcome: 'unauthorized', reason: 'this API key has been revoked' };
    if (!state.view.scopes.includes(scope)) {
      const api = { image: 'image compression API', tools: 'tools API', manage: 'management API (keys, webhooks)' }[
        scope
      ];
      return {
        outcome: 'forbidden',
        key: state.view,
        reason: `this key is not enabled for the ${api} (its scopes: ${state.view.scopes.join(', ') || 'none'})`,
      };
    }
    return { outcome: 'ok', key: state.view };
  }

  private async load(hash: string, now: number): Promise<CachedKey> {
    if (this.cached && now - this.cached.loadedAt < KEY_STATE_TTL_MS && now >= this.cached.loadedAt) return this.cached;
    // Concurrent first requests share one D1 read.
    this.loading ??= this.readKey(hash, now).finally(() => {
      this.loading = undefined;
    });
    const state = await this.loading;
    this.cached = state;
    return state;
  }

  private async readKey(hash: string, now: number): Promise<CachedKey> {
    const row = await this.env.DB.prepare(SQL.keyStateByHash).bind(hash).first<KeyStateRow>();
    if (!row || !digestsEqual(row.hash, hash)) return { view: null, revoked: false, loadedAt: now };
    this.lastUsedAt = Math.max(this.lastUsedAt ?? 0, row.last_used_at ?? 0) || null;
    return {
      revoked: row.revoked_at !== null,
      loadedAt: now,
      view: {
        id: row.key_id,
        name: row.key_name,
        prefix: row.prefix,
        scopes: parseScopes(row.scopes),
        createdAt: row.created_at,
        lastUsedAt: this.lastUsedAt,
        createdBy: row.created_by,
        account: { id: row.account_id, name: row.account_name, email: row.email },
        tiers: { image: row.image_tier, tools: row.tools_tier },
      },
    };
  }

  private touch(hash: string, now: number): void {
    this.lastUsedAt = Math.max(this.lastUsedAt ?? 0, now);
    if (this.cached?.view) this.cached.view.lastUsedAt = this.lastUsedAt;
    if (now - this.lastFlushAt < LAST_USED_FLUSH_MS) return;
    this.lastFlushAt = now;
    const write = this.env.DB.prepare(SQL.touchKey).bind(this.lastUsedAt, hash, this.lastUsedAt).run();
    this.ctx.waitUntil(
      write.then(
        () => undefined,
        (err: unknown) => console.error('last_used_at flush failed', String(err)),
      ),
    );
  }
}
