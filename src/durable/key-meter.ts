// One instance per API key, addressed by the key's SHA-256 hash. It authenticates and meters in a single
// round trip: the key's state is held in memory (loaded from D1, dropped on `refresh`), the counters in
// this object's SQLite storage. Tools API's windows are the key's own; Image API's month belongs to the account,
// so compressions are reserved, committed and released on the account's meter (AccountMeter), which this
// object calls once the key has authenticated. The key keeps its per-day history of both.
import { DurableObject } from 'cloudflare:workers';
import { digestsEqual } from '../accounts/constant-time.ts';
import type { KeyStateRow, KeyView } from '../accounts/records.ts';
import { parseScopes, type Scope } from '../accounts/tiers.ts';
import { SQL } from '../db/statements.ts';
import type { Env } from '../env.ts';
import { Counters } from '../metering/counters.ts';
import { KEY_STATE_TTL_MS, LAST_USED_FLUSH_MS } from '../metering/key-state.ts';
import {
  countFailedCompression,
  failedCompressions,
  FAILED_COMPRESSIONS_PER_MINUTE,
  meterManage,
  meterTools,
  toolsUsage,
} from '../metering/rules.ts';
import { dayWindow } from '../metering/windows.ts';
import { accountMeter } from '../metering/account-meter-stub.ts';
import type { AccountMeter } from './account-meter.ts';
import type { KeySnapshot, Verdict } from '../metering/types.ts';
import { handOff } from '../webhooks/dispatcher-stub.ts';
import { hookTarget, toolsEvents } from '../webhooks/meter-events.ts';
import { MeterOutbox } from '../webhooks/meter-outbox.ts';
import { exportObjectState, importObjectState, type ObjectState } from './object-state.ts';

interface CachedKey {
  view: KeyView | null; // null: no such key
  revoked: boolean;
  loadedAt: number;
}

export class KeyMeter extends DurableObject<Env> {
  private readonly counters: Counters;
  /** Webhook events born here (the key's day thresholds, its first 429s), waiting for the hand-off. */
  private readonly outbox: MeterOutbox;
  private cached: CachedKey | undefined;
  private loading: Promise<CachedKey> | undefined;
  private lastUsedAt: number | null = null;
  private lastFlushAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.counters = new Counters(ctx.storage.sql);
    this.outbox = new MeterOutbox(ctx.storage.sql);
  }

  /** Tools API. `count` is false only for /health. `withUsage` adds the full usage snapshot (/account). */
  async tools(hash: string, now: number, count: boolean, withUsage = false): Promise<Verdict> {
    const refused = await this.authenticate(hash, now, 'tools');
    if (refused.outcome !== 'ok' || !refused.key) return refused;
    const key = refused.key;
    const target = count ? hookTarget(key) : undefined;
    // The event, if any, commits with the counter that caused it: once per window however many race.
    const { result, recorded } = this.ctx.storage.transactionSync(() => {
      const result = meterTools(this.counters, key.tiers.tools, now, count);
      return {
        result,
        recorded:
          target !== undefined && toolsEvents(this.outbox, this.counters, target, key.tiers.tools, now, result.allowed),
      };
    });
    if (recorded) await this.ctx.storage.setAlarm(Date.now());
    if (!result.allowed) return { outcome: 'rate_limit_exceeded', key, rate: result.rate };
    this.touch(hash, now);
    const verdict: Verdict = { outcome: 'ok', key, rate: result.rate };
    if (withUsage) {
      const tools = toolsUsage(this.counters, key.tiers.tools, now);
      verdict.usage = { ...tools, month_compressions: await this.account(key).month(key.tiers.image, now) };
    }
    return verdict;
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
    if (!failures.allowed) {
      return {
        outcome: 'rate_limit_exceeded',
        key,
        rate: failures.rate,
        reason: `this key had ${FAILED_COMPRESSIONS_PER_MINUTE} uploads refused as unreadable or too large this minute`,
      };
    }
    const id = crypto.randomUUID();
    const result = await this.account(key).reserve(key.tiers.image, now, id, hookTarget(key));
    if (!result.allowed) return { outcome: 'quota_exceeded', key, rate: result.rate };
    this.touch(hash, now);
    return { outcome: 'ok', key, rate: result.rate, reservation: id };
  }

  /** Spends the reserved unit on the account's month and, when it was spent, counts it in this key's day. */
  async commit(hash: string, reservation: string, now: number): Promise<Verdict> {
    const key = await this.settleKey(hash, now);
    if (!key) return { outcome: 'unauthorized' };
    const result = await this.account(key).commit(key.tiers.image, reservation, now, hookTarget(key));
    if (result.charged)
      this.ctx.storage.transactionSync(() => this.counters.addDaily('compressions', dayWindow(now).start));
    return { outcome: 'ok', key, rate: result.rate };
  }

  /** Gives the reserved unit back; `refusedImage` when the upload was refused after its image was read (counted per minute). */
  async release(hash: string, reservation: string, now: number, refusedImage = false): Promise<Verdict> {
    const key = await this.settleKey(hash, now);
    if (!key) return { outcome: 'unauthorized' };
    if (refusedImage) this.ctx.storage.transactionSync(() => countFailedCompression(this.counters, now));
    const result = await this.account(key).release(key.tiers.image, reservation, now);
    return { outcome: 'ok', key, rate: result.rate };
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

  /** Forget the cached key state: the next request re-reads it from D1 (revoke, tier change). */
  async refresh(): Promise<void> {
    this.cached = undefined;
    this.loading = undefined;
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
