// Leases: how a location near the caller spends a key's windows, or its account's month, without a round
// trip to their home (the KeyMeter, the AccountMeter) on every request, and still never admits a unit over
// a limit (docs/design.md, "Leases").
//
// The home is the one authority over each window. It lends a location a slice of a window's remaining
// units; the sum of what it has lent and not yet heard spent never exceeds what remains, so
//     used(w) + Σ outstanding(w) ≤ limit(w)          for every window w,
// where outstanding = granted − reported. A holder spends only its own slice and only while its lease is
// valid by its own clock, and the home counts a lease it has not heard from by its expiry as fully spent.
// Everything here is synchronous over plain values: the Durable Objects and the simulation in the tests
// drive the same code.

/**
 * A reservation spent from a lease's slice is named `<lease id>/<n>`, so that whoever settles it (the
 * holder, or the home once the lease has ended) can tell which lease's slice it came from.
 */
export const reservationOf = (leaseId: string, n: number | string): string => `${leaseId}/${n}`;

/** The lease a reservation was spent under (reservationOf); '' for one taken at the home. */
export const leaseOfReservation = (id: string): string => id.slice(0, Math.max(0, id.lastIndexOf('/')));

/** One window a request spends a unit of. `limit` null: no cap (the window is still counted). */
export interface WindowSpec {
  name: string;
  start: number;
  end: number;
  limit: number | null;
}

export interface WindowRef {
  name: string;
  start: number;
}

/** What the home keeps of one lease. */
export interface LeaseRecord {
  id: string;
  location: string;
  epoch: number;
  windows: WindowRef[];
  /** Units lent so far (cumulative). */
  granted: number;
  /** Units the holder has said it spent (cumulative, ≤ granted). */
  reported: number;
  /** Home clock: past it, the lease is taken back as fully spent. */
  expiresAt: number;
  /** Reservations settled here while the lease was open, which its final report still counts as open. */
  early?: number;
}

/** A holder's word on one lease: how much it has spent in total, and whether it keeps the lease. */
export interface LeaseReport {
  id: string;
  /** Units spent for good (for a reservation: committed). */
  spent: number;
  keep: boolean;
  /** Reservations taken from the lease and not yet settled (the month's compressions still running). */
  open?: number;
}

/** What the home answers about a lease it renewed or opened. */
export interface LeaseGrant {
  id: string;
  epoch: number;
  windows: WindowSpec[];
  granted: number;
  /**
   * Per window, what this holder can prove is left before its own spends: limit − used − the other
   * leases' outstanding + this lease's reported (null: no cap). Remaining = base − spent.
   */
  base: (number | null)[];
}

/** Where the home keeps its windows' used counts (a KeyMeter's Counters, or the simulation's map). */
export interface WindowCounts {
  used(name: string, start: number): number;
  add(name: string, start: number, units?: number): void;
  /**
   * Units of an ended lease that may still be settled later, held under the lease's id until each is
   * committed or released there, or expires: the reservations in flight when its holder gave it up, or
   * (`spent`) every unreported unit of a lease nobody answered for, counted as used meanwhile since its
   * holder may have spent them. Without it (a spend that is final when made), they count as used.
   */
  hold?(name: string, start: number, leaseId: string, units: number, spent: boolean): void;
}

/** Where the home keeps its leases and epoch. */
export interface LeaseStore {
  records(): LeaseRecord[];
  put(record: LeaseRecord): void;
  delete(id: string): void;
  epoch(): number;
  setEpoch(epoch: number): void;
}

/** The same windows, in the same order. */
export const sameWindows = (a: WindowRef[], b: WindowRef[]): boolean =>
  a.length === b.length && a.every((w, i) => w.name === b[i]?.name && w.start === b[i]?.start);

const covers = (r: LeaseRecord, name: string, start: number): boolean =>
  r.windows.some((w) => w.name === name && w.start === start);

const outstanding = (r: LeaseRecord): number => r.granted - r.reported;

/** Longest a lease lives without an exchange with the home: the worst case of a revocation when a location is unreachable. */
export const LEASE_MAX_MS = 5_000;
/**
 * The home waits this much past LEASE_MAX_MS before it takes back a lease nobody answers for: the holder
 * counts its expiry from the moment it asked, before the home granted, and clocks may run a little apart.
 */
export const LEASE_GRACE_MS = 250;
/** No slice is larger than this share of what the window has left when it is granted. */
export const SLICE_MAX_SHARE = 0.2;
/** A slice is sized for this long of the location's recent rate. */
export const SLICE_HORIZON_MS = 2_000;
/**
 * A holder asks for at least this many units, and renews while one is left: the next request finds a
 * unit even when it comes before the renewal's answer.
 */
export const SLICE_MIN = 2;
/** The recent rate is the spends of this last span. */
export const RATE_SPAN_MS = 2_000;
/** A holder renews once its slice would last less than this at its recent rate, or its lease is half gone. */
export const RENEW_LEAD_MS = 600;
/** A lease unused for this long is given back rather than renewed. */
export const LEASE_IDLE_MS = 10_000;

/** The home's side: every step is one synchronous change, atomic inside a Durable Object. */
export class HomeLedger {
  private readonly counts: WindowCounts;
  private readonly store: LeaseStore;

  constructor(counts: WindowCounts, store: LeaseStore) {
    this.counts = counts;
    this.store = store;
  }

  get epoch(): number {
    return this.store.epoch();
  }

  records(): LeaseRecord[] {
    return this.store.records();
  }

  /** Units lent and not yet reported spent, in the window, over every lease but `exceptId`. */
  held(name: string, start: number, exceptId?: string): number {
    let sum = 0;
    for (const r of this.store.records()) if (r.id !== exceptId && covers(r, name, start)) sum += outstanding(r);
    return sum;
  }

  /** What the window has left to lend or spend: limit − used − outstanding (Infinity without a cap). */
  free(w: WindowSpec): number {
    if (w.limit === null) return Infinity;
    return w.limit - this.counts.used(w.name, w.start) - this.held(w.name, w.start);
  }

  /** A view of the counts in which lent units count as used: what a synchronous spend must respect. */
  heldCounts(): WindowCounts {
    return {
      used: (name, start) => this.counts.used(name, start) + this.held(name, start),
      add: (name, start, units) => this.counts.add(name, start, units),
    };
  }

  /** Takes back every lease past its expiry as fully spent, or held (its holder may have spent it and be gone). */
  expire(homeNow: number): LeaseRecord[] {
    const gone = this.store.records().filter((r) => homeNow >= r.expiresAt);
    for (const r of gone) this.end(r, r.reported, Infinity, true);
    return gone;
  }

  /**
   * Applies a holder's reports. Units newly reported spent move from outstanding to used; a lease the
   * holder gives up frees what it did not spend. Unknown ids (taken back, or closed already) are ignored:
   * their units were settled then. Returns the units newly counted, per lease id.
   */
  report(location: string, reports: LeaseReport[]): number {
    let counted = 0;
    for (const rep of reports) {
      const r = this.store.records().find((x) => x.id === rep.id && x.location === location);
      if (!r) continue;
      const spent = Math.min(Math.max(rep.spent, r.reported), r.granted);
      counted += spent - r.reported;
      if (rep.keep) {
        this.settle(r, spent);
        this.store.put(r);
      } else this.end(r, spent, rep.open ?? 0);
    }
    return counted;
  }

  /**
   * Renews the location's lease on `windows` (opens one when it has none) and lends it up to `want` more
   * units, never more than SLICE_MAX_SHARE of any window's free units. Returns null when there is no
   * lease and nothing to lend.
   */
  grant(
    location: string,
    windows: WindowSpec[],
    want: number,
    homeNow: number,
    newId: () => string,
    leaseId?: string,
  ): LeaseGrant | null {
    const refs = windows.map(({ name, start }) => ({ name, start }));
    let record = this.store
      .records()
      // A lease of an older epoch is never renewed: its key state may be void.
      .find(
        (r) => r.id === leaseId && r.location === location && r.epoch === this.epoch && sameWindows(r.windows, refs),
      );
    const units = sliceSize(
      want,
      windows.map((w) => this.free(w)),
    );
    if (!record) {
      if (units < 1) return null;
      record = { id: newId(), location, epoch: this.epoch, windows: refs, granted: 0, reported: 0, expiresAt: 0 };
    }
    record.granted += units;
    record.expiresAt = homeNow + LEASE_MAX_MS + LEASE_GRACE_MS;
    this.store.put(record);
    const r = record;
    return {
      id: r.id,
      epoch: r.epoch,
      windows,
      granted: r.granted,
      base: windows.map((w) =>
        w.limit === null
          ? null
          : w.limit - this.counts.used(w.name, w.start) - this.held(w.name, w.start, r.id) + r.reported,
      ),
    };
  }

  /**
   * A reservation of the lease `leaseId` settled at the home while the lease is still open here (its
   * holder gave it up, or restarted, and the lease's final report has not arrived): the unit leaves the
   * lease, spent when `charge`. False when there is no such lease.
   */
  settleOne(leaseId: string, charge: boolean): boolean {
    const r = this.store.records().find((x) => x.id === leaseId);
    if (!r || r.granted <= r.reported) return false;
    r.granted--;
    r.early = (r.early ?? 0) + 1;
    if (charge) for (const w of r.windows) this.counts.add(w.name, w.start, 1);
    this.store.put(r);
    return true;
  }

  /**
   * Lends the location the key's state alone (no units): the home of the key's state then knows the
   * location, so a revocation reaches it, while the units come from another home (the account's month).
   */
  lendState(location: string, homeNow: number, newId: () => string): void {
    const r = this.store
      .records()
      .find((x) => x.location === location && x.windows.length === 0 && x.epoch === this.epoch) ?? {
      id: newId(),
      location,
      epoch: this.epoch,
      windows: [],
      granted: 0,
      reported: 0,
      expiresAt: 0,
    };
    r.expiresAt = homeNow + LEASE_MAX_MS + LEASE_GRACE_MS;
    this.store.put(r);
  }

  /** A new epoch: every lease of an older one is void (revocation, tier change, deletion). */
  bumpEpoch(): number {
    const next = this.epoch + 1;
    this.store.setEpoch(next);
    return next;
  }

  /** After the holder at `location` answered a revocation to `epoch`: its leases of older epochs can no longer be spent. */
  endVoid(location: string, epoch: number): void {
    for (const r of this.store.records()) if (r.location === location && r.epoch < epoch) this.end(r, r.reported, 0);
  }

  /** Leases that may still be spent somewhere. */
  holders(exceptLocation?: string): LeaseRecord[] {
    return this.store.records().filter((r) => r.location !== exceptLocation);
  }

  private settle(r: LeaseRecord, spent: number): void {
    for (const w of r.windows) if (spent > r.reported) this.counts.add(w.name, w.start, spent - r.reported);
    r.reported = spent;
  }

  /**
   * Ends a lease: `spent` counted, up to `unsettled` of the rest held (or, without holds, counted) until
   * they settle; `expired`: nobody answered for them, so they may have been spent.
   */
  private end(r: LeaseRecord, spent: number, unsettled: number, expired = false): void {
    this.settle(r, spent);
    const units = Math.min(unsettled - (r.early ?? 0), r.granted - r.reported);
    if (units > 0)
      for (const w of r.windows)
        if (this.counts.hold) this.counts.hold(w.name, w.start, r.id, units, expired);
        else this.counts.add(w.name, w.start, units);
    this.store.delete(r.id);
  }
}

/** Units to lend: what the holder wants, at most SLICE_MAX_SHARE of each window's free units. */
export function sliceSize(want: number, free: number[]): number {
  let units = Math.max(0, Math.floor(want));
  for (const f of free) if (Number.isFinite(f)) units = Math.min(units, Math.floor(Math.max(0, f) * SLICE_MAX_SHARE));
  return units;
}

/** The X-RateLimit-* numbers a holder can prove: the window that runs out first (on a tie, the later one). */
export interface HeldRate {
  remaining: number;
  reset: number;
  /** Set by a spend that reserves (the month): the id to commit or release it by. */
  reservation?: string;
}

/** One lease as its holder keeps it. */
export interface HeldLease {
  id: string;
  epoch: number;
  windows: WindowSpec[];
  granted: number;
  spent: number;
  base: (number | null)[];
  /** Holder clock: the lease may be spent until then. */
  validUntil: number;
  /** Holder clock of the last spend (for giving back an idle lease). */
  lastSpendAt: number;
  /** Reservations taken and not yet settled (counted in `spent`); ids are `<lease id>/<n>`. */
  open: string[];
  /** Reservations taken so far, which number them. */
  taken: number;
}

/** The holder's side: its lease, the leases it gave up and has yet to report, its recent rate. */
export class HolderLedger {
  lease: HeldLease | null = null;
  /** Leases this holder will spend no more, reported at the next exchange until the home has heard. */
  closing: HeldLease[] = [];
  /** Leases of an older epoch are void, whenever their grants arrive. */
  minEpoch = 0;
  private readonly recent: number[] = [];
  private readonly closed: string[] = [];

  /** The lease if it may be spent on `windows` at holder time `clock`; a stale one is set aside. */
  usable(windows: WindowSpec[], clock: number): HeldLease | null {
    const l = this.lease;
    if (!l) return null;
    if (l.epoch < this.minEpoch || clock >= l.validUntil || !sameWindows(l.windows, windows)) {
      this.close();
      return null;
    }
    return l;
  }

  /**
   * Spends one unit of the lease when it has one; returns the proven rate, or null (ask the home).
   * `reserve`: the unit stays open until settle() commits or releases it.
   */
  spend(windows: WindowSpec[], clock: number, reserve = false): HeldRate | null {
    const l = this.usable(windows, clock);
    if (!l || l.spent >= l.granted) return null;
    l.spent++;
    l.lastSpendAt = clock;
    this.recent.push(clock);
    if (!reserve) return rateOf(l);
    const reservation = reservationOf(l.id, ++l.taken);
    l.open.push(reservation);
    return { ...rateOf(l), reservation };
  }

  /**
   * Settles a reservation of the lease still held: committed (`charge`), or released, when its unit goes
   * back to the slice. False for any other (its lease was given up, or is unknown): settle it at the home.
   */
  settle(reservation: string, charge: boolean): boolean {
    const l = this.lease;
    const i = l ? l.open.indexOf(reservation) : -1;
    if (!l || i < 0) return false;
    l.open.splice(i, 1);
    if (!charge) l.spent--;
    return true;
  }

  /** The proven rate without spending (health checks), or null. */
  peek(windows: WindowSpec[], clock: number): HeldRate | null {
    const l = this.usable(windows, clock);
    return l ? rateOf(l) : null;
  }

  /** Units to ask for: SLICE_HORIZON_MS of the recent rate (at least SLICE_MIN), less what the slice still has. */
  want(clock: number): number {
    const l = this.lease;
    const left = l && clock < l.validUntil && l.epoch >= this.minEpoch ? l.granted - l.spent : 0;
    return Math.max(0, this.target(clock) - left);
  }

  private target(clock: number): number {
    while (this.recent.length > 0 && (this.recent[0] as number) <= clock - RATE_SPAN_MS) this.recent.shift();
    return Math.max(SLICE_MIN, Math.ceil((this.recent.length * SLICE_HORIZON_MS) / RATE_SPAN_MS));
  }

  /** Whether to renew in the background now: the slice is down to its last unit (or RENEW_LEAD_MS of its rate), or the lease is past half its life. */
  wantsRenewal(clock: number): boolean {
    const l = this.lease;
    if (!l || l.epoch < this.minEpoch || clock >= l.validUntil) return false;
    if (clock - l.lastSpendAt >= LEASE_IDLE_MS) return false;
    const rate = this.target(clock) / SLICE_HORIZON_MS;
    return l.granted - l.spent <= Math.max(1, rate * RENEW_LEAD_MS) || l.validUntil - clock <= LEASE_MAX_MS / 2;
  }

  /** Whether the lease has gone unused long enough to be given back. */
  idle(clock: number): boolean {
    return this.lease !== null && clock - this.lease.lastSpendAt >= LEASE_IDLE_MS;
  }

  /** What the next exchange tells the home: the lease (kept) and every lease given up. */
  reports(): LeaseReport[] {
    const out = this.closing.map((l) => reportOf(l, false));
    if (this.lease) out.push(reportOf(this.lease, true));
    return out;
  }

  /**
   * The home's answer to an exchange sent at holder time `sentAt`. Gives-ups it carried are settled; the
   * grant renews the lease, or installs a new one when this holder has none, unless its epoch is void or
   * the lease was given up meanwhile. A lease the home did not renew is over.
   */
  answer(sentAt: number, sent: LeaseReport[], grant: LeaseGrant | null): void {
    const settled = new Set(sent.filter((r) => !r.keep).map((r) => r.id));
    this.closing = this.closing.filter((l) => !settled.has(l.id));
    const kept = sent.find((r) => r.keep)?.id;
    // The lease this exchange asked to keep and the home did not renew: it was taken back or ended there.
    if (kept !== undefined && this.lease?.id === kept && grant?.id !== kept) this.lease = null;
    if (!grant || this.closed.includes(grant.id)) return;
    const l = this.lease;
    if (grant.epoch < this.minEpoch) {
      // A new lease of a void epoch: give its units back at the next exchange rather than at its expiry.
      if (l?.id !== grant.id) this.giveUp(held(grant, sentAt));
      return;
    }
    if (l && l.id === grant.id) {
      l.granted = Math.max(l.granted, grant.granted);
      l.base = grant.base;
      l.validUntil = Math.max(l.validUntil, sentAt + LEASE_MAX_MS);
    } else if (!l) this.lease = held(grant, sentAt);
  }

  /** Stops spending the lease; its final count goes to the home at the next exchange. */
  close(): void {
    const l = this.lease;
    if (!l) return;
    this.lease = null;
    this.giveUp(l);
  }

  private giveUp(l: HeldLease): void {
    this.closing.push(l);
    this.closed.push(l.id);
    if (this.closed.length > 64) this.closed.shift();
  }

  /**
   * The home's recall (it needs the units) or revocation (`epoch`: every lease before it is void): stops
   * spending at once and answers with the final counts, which settle the leases at the home.
   */
  surrender(epoch?: number): LeaseReport[] {
    if (epoch !== undefined) this.minEpoch = Math.max(this.minEpoch, epoch);
    this.close();
    const out = this.closing.map((l) => reportOf(l, false));
    this.closing = [];
    return out;
  }
}

const held = (grant: LeaseGrant, sentAt: number): HeldLease => ({
  id: grant.id,
  epoch: grant.epoch,
  windows: grant.windows,
  granted: grant.granted,
  spent: 0,
  base: grant.base,
  validUntil: sentAt + LEASE_MAX_MS,
  lastSpendAt: sentAt,
  open: [],
  taken: 0,
});

/** Units committed for good, and the reservations still running (settled at the home once the lease is given up). */
const reportOf = (l: HeldLease, keep: boolean): LeaseReport => ({
  id: l.id,
  spent: l.spent - l.open.length,
  keep,
  ...(l.open.length > 0 ? { open: l.open.length } : {}),
});

function rateOf(l: HeldLease): HeldRate {
  let best: HeldRate | null = null;
  l.windows.forEach((w, i) => {
    const base = l.base[i];
    if (base === null || base === undefined) return;
    const left = Math.max(0, base - l.spent);
    if (!best || left < best.remaining || (left === best.remaining && w.end > best.reset)) {
      best = { remaining: left, reset: w.end };
    }
  });
  // Every window uncapped: the first one's reset, nothing proven beyond the slice.
  return best ?? { remaining: Math.max(0, l.granted - l.spent), reset: l.windows[0]?.end ?? 0 };
}
