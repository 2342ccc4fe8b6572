// The lease holder's conduct, over ports so that its Durable Object (src/metering/lease-holder.ts) and the
// simulation in the tests run the same steps: spend from the slice when it can; otherwise join the next
// exchange with the home, which spends for every waiting request at once (today's synchronous path) and
// renews the lease; renew in the background before the slice runs out; give an idle lease back.
import {
  HolderLedger,
  LEASE_MAX_MS,
  type HeldRate,
  sameWindows,
  type LeaseGrant,
  type LeaseReport,
  type WindowSpec,
} from './lease.ts';

export interface ExchangeRequest {
  location: string;
  /** The requests' time (it picks the windows). */
  now: number;
  reports: LeaseReport[];
  /** Units wanted on top of the slice's remainder (0: renew only). */
  want: number;
  /** Requests waiting for the home to spend a unit each, in order. */
  spend: number;
}

export interface ExchangeAnswer<V, S> {
  /** One per waiting request, in order. */
  verdicts: V[];
  grant: LeaseGrant | null;
  /** What the lease's spends answer with (the key's state on a KeyMeter's lease). */
  state?: S;
  /**
   * Set with a refusal when nothing is lent anywhere and the window is full: nothing can free a unit
   * before this request time, so the holder may refuse alike until then without asking.
   */
  exhaustedUntil?: number;
}

export interface HolderPorts<V, S> {
  location: string;
  /** This holder's own clock (lease validity). */
  clock(): number;
  exchange(request: ExchangeRequest): Promise<ExchangeAnswer<V, S>>;
  /** The windows a request at request time `now` spends, given the lease's state (none known: []). */
  windows(now: number, state: S | undefined): WindowSpec[];
  /** Runs `fn` after `ms` of this holder's clock. */
  later(ms: number, fn: () => void): void;
  /** A spend is a reservation, committed or released later (the month's compressions). */
  reserves?: boolean;
}

export type Decision<V, S> = { local: HeldRate; state: S } | { verdict: V };

interface Waiter<V, S> {
  now: number;
  resolve(d: Decision<V, S>): void;
  reject(err: unknown): void;
}

/** Checks an idle or ageing lease this often. */
const TICK_MS = LEASE_MAX_MS / 5;

export class LeaseClient<V, S> {
  readonly ledger = new HolderLedger();
  private state: S | undefined;
  private refused: { windows: WindowSpec[]; until: number; verdict: V } | null = null;
  private queue: Waiter<V, S>[] = [];
  private running = false;
  /** Waiting for the next exchange to end. */
  private flushers: (() => void)[] = [];
  private ticking = false;
  private now = 0;
  private readonly ports: HolderPorts<V, S>;

  constructor(ports: HolderPorts<V, S>) {
    this.ports = ports;
  }

  /**
   * A counted request at request time `now`. With `reserves` (the month), a unit from the slice stays
   * open until settle() commits or releases it by the id in `local.reservation`.
   */
  spend(now: number): Promise<Decision<V, S>> {
    this.now = now;
    const local = this.tryLocal(now);
    if (local) return Promise.resolve(local);
    return new Promise((resolve, reject) => {
      this.queue.push({ now, resolve, reject });
      this.pump();
    });
  }

  /** Commits (`charge`) or releases a reservation of the lease held; false: settle it at the home. */
  settle(reservation: string, charge: boolean): boolean {
    const done = this.ledger.settle(reservation, charge);
    // A released unit may be one a refusal from memory was waiting for.
    if (done && !charge) this.refused = null;
    return done;
  }

  /** Reports what the lease has spent now, in an exchange of its own or the next one; resolves once it has ended. */
  flush(): Promise<void> {
    return new Promise((resolve) => {
      this.flushers.push(resolve);
      this.pump(true);
    });
  }

  /**
   * A revocation (`epoch`) of the key whose state this lease carries, from another home than the one of
   * its units: nothing more is spent, and the final counts go to the units' home at the next exchange.
   */
  drop(epoch: number): void {
    this.refused = null;
    this.state = undefined;
    this.ledger.minEpoch = Math.max(this.ledger.minEpoch, epoch);
    this.ledger.close();
    this.pump(true);
  }

  /** The proven rate without spending, when a lease holds it. */
  peek(now: number): { local: HeldRate; state: S } | null {
    if (this.state === undefined) return null;
    const rate = this.ledger.peek(this.ports.windows(now, this.state), this.ports.clock());
    return rate ? { local: rate, state: this.state } : null;
  }

  /** The home recalls the slice or revokes (`epoch`): nothing more is spent; the final counts go back. */
  surrender(epoch?: number): LeaseReport[] {
    this.refused = null;
    if (epoch !== undefined) this.state = undefined;
    return this.ledger.surrender(epoch);
  }

  private tryLocal(now: number): Decision<V, S> | null {
    const clock = this.ports.clock();
    const windows = this.ports.windows(now, this.state);
    const rate = this.state !== undefined ? this.ledger.spend(windows, clock, this.ports.reserves) : null;
    if (rate && this.state !== undefined) {
      if (this.ledger.wantsRenewal(clock)) this.pump(true);
      return { local: rate, state: this.state };
    }
    const r = this.refused;
    if (r && sameWindows(r.windows, windows) && now < r.until) return { verdict: r.verdict };
    return null;
  }

  /** Starts an exchange unless one runs; `renew`: even with nobody waiting. */
  private pump(renew = false): void {
    if (this.running || (!renew && this.queue.length === 0)) return;
    this.running = true;
    const flushing = this.flushers.splice(0);
    void this.run().finally(() => {
      this.running = false;
      for (const resolve of flushing) resolve();
      if (this.queue.length > 0 || this.flushers.length > 0) this.pump(this.flushers.length > 0);
    });
  }

  private async run(): Promise<void> {
    // Waiters that a renewal answered meanwhile spend locally; the rest, on the first one's windows, go now.
    const at = (w: Waiter<V, S>) => this.ports.windows(w.now, this.state);
    const first = this.queue[0];
    const batch: Waiter<V, S>[] = [];
    const later: Waiter<V, S>[] = [];
    for (const w of this.queue.splice(0)) {
      const local = this.tryLocal(w.now);
      if (local) w.resolve(local);
      else if (first && sameWindows(at(w), at(first))) batch.push(w);
      else later.push(w);
    }
    this.queue.push(...later);
    const now = batch[0]?.now ?? this.now;
    const sentAt = this.ports.clock();
    const reports = this.ledger.reports();
    if (batch.length === 0 && reports.length === 0) return;
    try {
      const answer = await this.ports.exchange({
        location: this.ports.location,
        now,
        reports,
        // A give-back with nobody waiting asks for nothing: an idle location keeps no slice.
        want: batch.length > 0 || this.ledger.lease ? this.ledger.want(sentAt) : 0,
        spend: batch.length,
      });
      this.ledger.answer(sentAt, reports, answer.grant);
      if (answer.grant && this.ledger.lease?.id === answer.grant.id && answer.state !== undefined)
        this.state = answer.state;
      batch.forEach((w, i) => {
        w.resolve({ verdict: answer.verdicts[i] as V });
      });
      const last = answer.verdicts.at(-1);
      if (answer.exhaustedUntil !== undefined && batch[0] && last !== undefined)
        this.refused = { windows: at(batch[0]), until: answer.exhaustedUntil, verdict: last };
      this.tick();
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }

  /** While a lease or a give-up is pending: renew an active lease, give back an idle one. */
  private tick(): void {
    if (this.ticking || (!this.ledger.lease && this.ledger.closing.length === 0)) return;
    this.ticking = true;
    this.ports.later(TICK_MS, () => {
      this.ticking = false;
      const clock = this.ports.clock();
      if (this.ledger.idle(clock)) this.ledger.close();
      if (this.ledger.closing.length > 0 || this.ledger.wantsRenewal(clock)) this.pump(true);
      this.tick();
    });
  }
}
