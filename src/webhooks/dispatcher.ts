// One instance per account, addressed by the account id: every webhook message of the account and its
// delivery schedule. Events arrive from D1's outbox (key.created, key.revoked: `pull`), from the meters'
// outboxes (usage.threshold, rate_limit.exceeded: `accept`) and from the test endpoint (`sendTest`); each
// is stored once by its id and fanned out to the endpoints that listen for its type. Attempts start from
// this object's alarm, which storage keeps across restarts and redeploys, and run side by side, one per
// endpoint (MAX_CONCURRENT_DELIVERIES): the alarm does not wait for them, so a receiver that hangs holds up
// no other endpoint's attempts or alarms. A delivery is marked done only after its attempt, and an alarm
// stays set while attempts are in flight, so a crash mid-attempt means the message is sent again with the
// same id (at least once).
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.ts';
import { attemptDelivery } from './delivery.ts';
import { DispatchStore, type DeliveryView, type DueDelivery } from './dispatch-store.ts';
import { endpointTargets, recordHealth, type EndpointTarget } from './endpoints.ts';
import { event, type EventType, type WebhookEvent } from './events.ts';
import { ALARM_RETRY_MS, MAX_CONCURRENT_DELIVERIES, MAX_MANUAL_SENDS_PER_HOUR, RETENTION_MS } from './limits.ts';
import { attemptTimeout, disableAfter, retrySchedule } from './schedule.ts';
import { exportObjectState, importObjectState, type ObjectState } from '../metering/object-state.ts';

/** How long past its timeout an attempt may hold its endpoint before a new one may start. */
const BUSY_GRACE_MS = 60_000;
/** Outbox rows taken per D1 read; `pull` reads again until fewer come back. */
const OUTBOX_BATCH = 100;

/** What a manual send (test, retry) answers: the message id, or when the hour's budget frees up. */
export type ManualSend = { ok: true; msgId: string } | { ok: false; retryAfterMs: number; max: number };

const OUTBOX_SQL = {
  take: `SELECT id, account_id, type, body, created_at FROM webhook_outbox WHERE account_id = ? ORDER BY created_at, id LIMIT ${OUTBOX_BATCH}`,
  done: 'DELETE FROM webhook_outbox WHERE id IN (SELECT value FROM json_each(?))',
} as const;

export class WebhookDispatcher extends DurableObject<Env> {
  private readonly store: DispatchStore;
  /**
   * Endpoints with an attempt in flight in this instance, and when it started (gone with the instance:
   * then the alarm sends again).
   */
  private readonly busy = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new DispatchStore(ctx.storage.sql);
  }

  /** Takes the account's events out of D1's outbox (copy here first, then delete there). */
  async pull(accountId: string): Promise<number> {
    this.store.accountId = accountId;
    let total = 0;
    for (;;) {
      const rows = await this.env.DB.prepare(OUTBOX_SQL.take)
        .bind(accountId)
        .all<{ id: string; account_id: string; type: EventType; body: string; created_at: number }>();
      if (rows.results.length === 0) return total;
      const events = rows.results.map((r) => ({
        id: r.id,
        accountId: r.account_id,
        type: r.type,
        body: r.body,
        createdAt: r.created_at,
      }));
      await this.enqueue(events);
      await this.env.DB.prepare(OUTBOX_SQL.done)
        .bind(JSON.stringify(events.map((e) => e.id)))
        .run();
      total += events.length;
      if (events.length < OUTBOX_BATCH) return total;
    }
  }

  /** Events a meter recorded in its own storage; it forgets them once this returns. */
  async accept(accountId: string, events: WebhookEvent[]): Promise<void> {
    this.store.accountId = accountId;
    await this.enqueue(events);
  }

  /** A webhook.test message to one endpoint, whatever events it listens for (a manual send). */
  async sendTest(accountId: string, endpointId: string, now: number): Promise<ManualSend> {
    this.store.accountId = accountId;
    const budget = this.store.spendManual(Date.now(), MAX_MANUAL_SENDS_PER_HOUR);
    if (!budget.ok) return { ok: false, retryAfterMs: budget.retryAfterMs, max: MAX_MANUAL_SENDS_PER_HOUR };
    const e = event(accountId, 'webhook.test', now, {
      endpoint_id: endpointId,
      message: 'A test event from Shrinkray: your endpoint receives and verifies webhooks.',
    });
    this.ctx.storage.transactionSync(() => {
      this.store.addMessage(e);
      this.store.addDelivery(e.id, endpointId, Date.now() + (retrySchedule(this.env)[0] ?? 0));
    });
    await this.wake();
    return { ok: true, msgId: e.id };
  }

  async deliveries(endpointId: string): Promise<DeliveryView[]> {
    return this.store.log(endpointId);
  }

  /** One more attempt now (a manual send); null when the endpoint never had this message. */
  async retry(endpointId: string, msgId: string): Promise<ManualSend | null> {
    if (!this.store.hasDelivery(msgId, endpointId)) return null;
    const budget = this.store.spendManual(Date.now(), MAX_MANUAL_SENDS_PER_HOUR);
    if (!budget.ok) return { ok: false, retryAfterMs: budget.retryAfterMs, max: MAX_MANUAL_SENDS_PER_HOUR };
    this.store.retry(msgId, endpointId, Date.now());
    await this.wake();
    return { ok: true, msgId };
  }

  /** The endpoint was deleted: its deliveries and log go with it. */
  async forget(endpointId: string): Promise<void> {
    this.store.forget(endpointId);
  }

  /** The endpoint was disabled by its owner: what was waiting for it is given up. */
  async giveUp(endpointId: string): Promise<void> {
    this.store.failPending(endpointId);
  }

  /** The operator's backup (docs/self-hosting.md): this object's tables and alarm. */
  async exportState(): Promise<ObjectState> {
    return exportObjectState(this.ctx);
  }

  /** The operator's restore: replaces this object's state with a backup's. */
  async importState(state: ObjectState): Promise<void> {
    await importObjectState(this.ctx, state);
  }

  override async alarm(): Promise<void> {
    await this.pump();
    this.store.prune(Date.now() - RETENTION_MS);
  }

  /**
   * Starts the due deliveries of endpoints that have no attempt in flight, up to MAX_CONCURRENT_DELIVERIES
   * in flight, and returns without waiting for them: each one, once settled, pumps again.
   */
  private async pump(): Promise<void> {
    const accountId = this.store.accountId;
    if (accountId === null) return;
    const now = Date.now();
    // An attempt is bounded by its timeout, but what follows it (a D1 write) is not: one that never
    // settles must not hold its endpoint for ever (at least once allows the resend).
    for (const [id, started] of this.busy)
      if (now - started > attemptTimeout(this.env) + BUSY_GRACE_MS) this.busy.delete(id);
    const due = this.store.due(now, MAX_CONCURRENT_DELIVERIES - this.busy.size, [...this.busy.keys()]);
    // Claimed before the first await, so a pump running meanwhile cannot start the same ones.
    for (const d of due) this.busy.set(d.endpoint_id, now);
    if (due.length > 0) {
      let endpoints: Map<string, EndpointTarget>;
      try {
        endpoints = new Map((await endpointTargets(this.env.DB, accountId)).map((e) => [e.id, e]));
      } catch (err) {
        for (const d of due) this.busy.delete(d.endpoint_id);
        // D1 unreachable, most likely. The runtime's own alarm retries give up after a few; this does not.
        console.error('webhook dispatch failed; retrying', err instanceof Error ? err.message : String(err));
        await this.ctx.storage.setAlarm(Date.now() + ALARM_RETRY_MS);
        return;
      }
      for (const d of due) {
        void this.deliver(d, endpoints.get(d.endpoint_id))
          .catch((err: unknown) =>
            console.error('webhook delivery not recorded', err instanceof Error ? err.message : String(err)),
          )
          .finally(() => {
            if (this.busy.get(d.endpoint_id) === now) this.busy.delete(d.endpoint_id);
            this.pump().catch((err: unknown) =>
              console.error('webhook dispatch failed', err instanceof Error ? err.message : String(err)),
            );
          });
      }
    }
    await this.wake();
  }

  private async deliver(d: DueDelivery, endpoint: EndpointTarget | undefined): Promise<void> {
    const at = Date.now();
    if (!endpoint?.enabled) {
      this.store.recordAttempt(d.msg_id, d.endpoint_id, {
        at,
        status: null,
        error: endpoint ? 'not sent: the endpoint is disabled' : 'not sent: the endpoint was deleted',
        duration_ms: 0,
      });
      this.store.settle(d.msg_id, d.endpoint_id, 'failed', d.attempts, null);
      return;
    }
    const result = await attemptDelivery(
      endpoint,
      d.msg_id,
      d.body,
      this.env.FETCH_TEST_ORIGIN,
      attemptTimeout(this.env),
    );
    const schedule = retrySchedule(this.env);
    const attempts = d.attempts + 1;
    this.store.recordAttempt(d.msg_id, d.endpoint_id, {
      at,
      status: result.status,
      error: result.error,
      duration_ms: result.durationMs,
    });
    if (result.success) this.store.settle(d.msg_id, d.endpoint_id, 'succeeded', attempts, null);
    else if (d.manual === 1 || attempts >= schedule.length)
      this.store.settle(d.msg_id, d.endpoint_id, 'failed', attempts, null);
    else this.store.settle(d.msg_id, d.endpoint_id, 'pending', attempts, Date.now() + (schedule[attempts] ?? 0));
    // The attempt is settled above; a D1 failure here only delays the endpoint's health, and must not
    // end the alarm while other deliveries are still in flight (they would be sent twice).
    try {
      if (
        await recordHealth(
          this.env.DB,
          endpoint.id,
          result.success,
          at,
          disableAfter(this.env),
          streakGap(schedule, attemptTimeout(this.env)),
        )
      ) {
        this.store.failPending(endpoint.id);
      }
    } catch (err) {
      console.error('webhook endpoint health not recorded', err instanceof Error ? err.message : String(err));
    }
  }

  /** Stores new messages and their deliveries to every enabled endpoint that listens for the type. */
  private async enqueue(events: WebhookEvent[]): Promise<void> {
    const accountId = this.store.accountId;
    if (accountId === null || events.length === 0) return;
    const endpoints = await endpointTargets(this.env.DB, accountId);
    const first = retrySchedule(this.env)[0] ?? 0;
    this.ctx.storage.transactionSync(() => {
      for (const e of events) {
        if (!this.store.addMessage(e)) continue;
        for (const ep of endpoints)
          if (ep.enabled && ep.events.includes(e.type)) this.store.addDelivery(e.id, ep.id, Date.now() + first);
      }
    });
    await this.wake();
  }

  /**
   * Sets the alarm to the earliest pending attempt of an endpoint with none in flight. While attempts are
   * in flight, also to when they must have ended: if this instance is lost meanwhile, that alarm sends
   * them again.
   */
  private async wake(): Promise<void> {
    const due = this.store.nextDue([...this.busy.keys()]);
    const next = this.busy.size > 0 ? Math.min(due ?? Infinity, Date.now() + attemptTimeout(this.env)) : due;
    if (next === null) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next) await this.ctx.storage.setAlarm(next);
  }
}

/**
 * The longest time between two failed attempts of one unbroken failure streak: the schedule's longest
 * gap, plus an attempt's timeout, plus a minute for alarms that run late. Failures further apart than
 * this start a new streak.
 */
function streakGap(schedule: readonly number[], timeoutMs: number): number {
  return Math.max(...schedule) + timeoutMs + 60_000;
}
