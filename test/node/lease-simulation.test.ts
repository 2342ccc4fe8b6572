// A discrete-event simulation of the lease protocol: the real HomeLedger, LeaseClient, serveExchange and
// revokeLeases (src/metering/lease*.ts) and the real Tools API rule (meterTools), on virtual time with a
// seeded PRNG. Thousands of random schedules: locations far and near, messages lost either way, holders
// restarting mid-lease, clock skew and drift, bursts, recalls racing renewals, revocation during a burst.
// Every schedule must admit no request over any window's limit and none after a revocation is
// acknowledged; the schedules without faults must leave at most 1 % of a full window unused.
// The Image API's month runs the same protocol with reservations (the real month rules): compressions
// that last from milliseconds to many seconds, fail and give their unit back, outlive their lease, and
// settle at a holder that restarted. No month may answer more compressions than its quota, and the month
// must count exactly the compressions answered.
import { describe, expect, it } from 'vitest';
import {
  LeaseClient,
  type ExchangeAnswer,
  type ExchangeRequest,
  type HolderPorts,
} from '../../src/metering/lease-client.ts';
import { revokeLeases, serveExchange, type HomePorts } from '../../src/metering/lease-home.ts';
import { RESERVATION_TTL_MS } from '../../src/metering/counters.ts';
import { monthCounts } from '../../src/metering/lease-store.ts';
import {
  HomeLedger,
  type LeaseRecord,
  type LeaseReport,
  type LeaseStore,
  leaseOfReservation,
  reservationOf,
} from '../../src/metering/lease.ts';
import {
  commitCompression,
  meterTools,
  monthWindows,
  releaseCompression,
  reserveCompression,
  toolsWindows,
  type MonthCounts,
  type ToolsCounts,
} from '../../src/metering/rules.ts';
import { prng } from '../bench/lib/prng.ts';

const LIMIT = 100; // the free tier's minute
const SCHEDULES = 700;
const QUOTA = 100; // the free tier's month
const MONTH_SCHEDULES = 160;

/** Virtual time: events in a binary heap by (time, order); every microtask settles before the next event. */
class Sim {
  now = 0;
  private heap: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  private before(i: number, j: number): boolean {
    const a = this.heap[i]!;
    const b = this.heap[j]!;
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }
  private swap(i: number, j: number): void {
    const h = this.heap;
    [h[i], h[j]] = [h[j]!, h[i]!];
  }
  at(t: number, fn: () => void): void {
    this.heap.push({ at: Math.max(t, this.now), seq: this.seq++, fn });
    for (let i = this.heap.length - 1; i > 0 && this.before(i, (i - 1) >> 1); i = (i - 1) >> 1)
      this.swap(i, (i - 1) >> 1);
  }
  private pop(): { at: number; fn: () => void } | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    this.swap(0, h.length - 1);
    const top = h.pop()!;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.before(l, m)) m = l;
      if (r < h.length && this.before(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }
  after(ms: number, fn: () => void): void {
    this.at(this.now + ms, fn);
  }
  sleep(ms: number): Promise<void> {
    return new Promise((r) => this.after(ms, r));
  }
  async run(until: number): Promise<void> {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      const e = this.pop();
      if (!e || e.at > until) return;
      this.now = e.at;
      e.fn();
    }
  }
}

interface Faults {
  loss: number;
  crash: number;
  revokeAt: number | null;
}

interface Outcome {
  over: number;
  afterRevoke: number;
  /** Per window with demand over the limit: units left unused. */
  unused: number[];
}

type V = { ok: boolean; until?: number; decidedAt?: number; reservation?: string };

interface Location {
  name: string;
  /** One-way delay to the home, ms. */
  oneWay: number;
  skew: number;
  drift: number;
  /** Requests a second. */
  rate: number;
}

/** 1 to 4 locations, near and far from the home, with skewed and drifting clocks. */
function randomLocations(rand: () => number, rate: () => number): Location[] {
  return Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, i) => ({
    name: `L${i}`,
    oneWay: 0.5 + rand() * 90,
    skew: (rand() - 0.5) * 20_000,
    drift: 1 + (rand() - 0.5) * 0.01,
    rate: rate(),
  }));
}

/**
 * Each location's holder, and the network between them and the home: a message takes its location's
 * distance (±20 %) and is lost with probability `loss`. A restart (`make`) replaces a location's holder,
 * and answers to the old one are dropped. `call` is the home's recall or revocation.
 */
function holders(
  sim: Sim,
  rand: () => number,
  loss: number,
  locations: Location[],
  home: (request: ExchangeRequest) => Promise<ExchangeAnswer<V, true>>,
  options: Pick<HolderPorts<V, true>, 'windows' | 'reserves'>,
) {
  const current = new Map<string, { gen: number; client: LeaseClient<V, true> }>();
  const net = (oneWay: number) => oneWay * (0.8 + rand() * 0.4);
  const client = (name: string) => current.get(name)!.client;
  function make(spec: Location) {
    const gen = (current.get(spec.name)?.gen ?? 0) + 1;
    const live = () => current.get(spec.name)?.gen === gen;
    const holder = new LeaseClient<V, true>({
      ...options,
      location: spec.name,
      clock: () => sim.now * spec.drift + spec.skew,
      later: (ms, fn) => sim.after(ms / spec.drift, () => live() && fn()),
      exchange: (request) =>
        new Promise((resolve, reject) => {
          sim.after(net(spec.oneWay), () => {
            if (rand() < loss) return void sim.after(spec.oneWay * 2, () => reject(new Error('lost')));
            void home(request).then((answer) =>
              sim.after(net(spec.oneWay), () => {
                if (!live()) return;
                if (rand() < loss) reject(new Error('lost'));
                else resolve(answer);
              }),
            );
          });
        }),
    });
    current.set(spec.name, { gen, client: holder });
  }
  function call(loc: string, epoch: number | undefined) {
    const spec = locations.find((l) => l.name === loc)!;
    return new Promise<LeaseReport[]>((resolve, reject) => {
      sim.after(net(spec.oneWay), () => {
        if (rand() < loss) return; // lost: the home's wait times out
        const reports = client(loc).surrender(epoch);
        sim.after(net(spec.oneWay), () => (rand() < loss ? reject(new Error('lost')) : resolve(reports)));
      });
    });
  }
  for (const l of locations) make(l);
  return { client, make, call, net };
}

/** A home's leases in memory, by reference, as the Durable Object's cache keeps them. */
function memoryStore(): LeaseStore {
  const records = new Map<string, LeaseRecord>();
  let epoch = 0;
  return {
    records: () => [...records.values()],
    put: (r) => {
      records.set(r.id, r);
    },
    delete: (id) => {
      records.delete(id);
    },
    epoch: () => epoch,
    setEpoch: (e) => {
      epoch = e;
    },
  };
}

async function schedule(seed: number, faults: Faults): Promise<Outcome> {
  const rand = prng(seed);
  const sim = new Sim();
  const used = new Map<string, number>();
  const counts: ToolsCounts = {
    used: (n, s) => used.get(`${n}:${s}`) ?? 0,
    add: (n, s, u = 1) => {
      used.set(`${n}:${s}`, (used.get(`${n}:${s}`) ?? 0) + u);
    },
    addDaily: () => undefined,
  };
  const ledger = new HomeLedger(counts, memoryStore());
  // A synchronous spend sees lent units as used, as the KeyMeter's HeldCounters make it.
  const held = ledger.heldCounts();
  const heldCounts: ToolsCounts = { used: (n, s) => held.used(n, s), add: counts.add, addDaily: () => undefined };
  let revoked = false;
  let revokedAck = Infinity;
  let ids = 0;

  const locations = randomLocations(rand, () => rand() * 3);
  const admitted = new Map<number, number>();
  const demand = new Map<number, number>();
  let over = 0;
  let afterRevoke = 0;

  const homePorts = (): HomePorts => ({
    clock: () => sim.now,
    sleep: (ms) => sim.sleep(ms),
    atomically: (fn) => fn(),
    recall: (loc) => network.call(loc, undefined),
    revoke: (loc, e) => network.call(loc, e),
    newId: () => `lease-${++ids}`,
  });

  async function home(request: ExchangeRequest): Promise<ExchangeAnswer<V, true>> {
    const windows = toolsWindows('free', request.now);
    const e = ledger.epoch;
    if (revoked) {
      ledger.expire(sim.now);
      ledger.report(request.location, request.reports);
      return { verdicts: Array.from({ length: request.spend }, () => ({ ok: false })), grant: null };
    }
    return serveExchange(ledger, homePorts(), request, windows, e, true as const, () => {
      const r = meterTools(heldCounts, 'free', request.now, true);
      const until = r.rate.reset * 1000;
      return { verdict: { ok: r.allowed, until, decidedAt: sim.now }, allowed: r.allowed, until };
    });
  }

  const network = holders(sim, rand, faults.loss, locations, home, { windows: (at) => toolsWindows('free', at) });

  // From 5 s before a minute starts: with faults, across that boundary; without, to 5 s after the minute
  // ends (one whole window, whose unused units are measured).
  const clean = faults.loss === 0 && faults.crash === 0 && faults.revokeAt === null;
  const END = clean ? 125_000 : 95_000;
  sim.now = 55_000;
  function arrive(spec: Location, at: number) {
    sim.at(at, () => {
      const burst = rand() < 0.05 ? 1 + Math.floor(rand() * 40) : 1;
      for (let i = 0; i < burst; i++) {
        const now = sim.now + spec.skew; // the Worker beside the holder shares its clock
        const minute = Math.floor(now / 60_000) * 60_000;
        demand.set(minute, (demand.get(minute) ?? 0) + 1);
        network
          .client(spec.name)
          .spend(now)
          .then(
            (d) => {
              if ('verdict' in d && !d.verdict.ok) return;
              const n = (admitted.get(minute) ?? 0) + 1;
              admitted.set(minute, n);
              if (n > LIMIT) over++;
              // Decided where: at the home for a synchronous spend, here for a spend of the slice.
              const decidedAt = 'verdict' in d ? (d.verdict.decidedAt ?? sim.now) : sim.now;
              if (decidedAt >= revokedAck) afterRevoke++;
            },
            () => undefined,
          );
      }
      if (rand() < faults.crash) network.make(spec);
      const gap = spec.rate > 0 ? (-Math.log(1 - rand()) / spec.rate) * 1000 : END;
      if (sim.now + gap < END) arrive(spec, sim.now + gap);
    });
  }
  for (const l of locations) arrive(l, sim.now + rand() * 1000);
  if (faults.revokeAt !== null) {
    sim.at(faults.revokeAt, () => {
      revoked = true;
      void revokeLeases(ledger, homePorts()).then(() => {
        revokedAck = sim.now;
      });
    });
  }
  await sim.run(END + 30_000);

  const unused: number[] = [];
  for (const [minute, d] of demand) {
    if (d <= LIMIT * 1.2 || faults.revokeAt !== null) continue;
    // The whole window only.
    if (minute !== 60_000) continue;
    unused.push(LIMIT - (admitted.get(minute) ?? 0));
  }
  return { over, afterRevoke, unused };
}

describe('lease protocol simulation', () => {
  it('never admits over a limit nor after a revocation, over thousands of random schedules', async () => {
    let over = 0;
    let afterRevoke = 0;
    const unused: number[] = [];
    for (let seed = 1; seed <= SCHEDULES; seed++) {
      const rand = prng(seed * 7919);
      const faulty = seed % 4 !== 0;
      const faults: Faults = faulty
        ? { loss: rand() * 0.1, crash: rand() * 0.02, revokeAt: rand() < 0.3 ? 56_000 + rand() * 38_000 : null }
        : { loss: 0, crash: 0, revokeAt: null };
      const out = await schedule(seed, faults);
      over += out.over;
      afterRevoke += out.afterRevoke;
      if (!faulty) unused.push(...out.unused);
    }
    expect(over).toBe(0);
    expect(afterRevoke).toBe(0);
    expect(unused.length).toBeGreaterThan(50);
    expect(Math.max(...unused)).toBeLessThanOrEqual(LIMIT * 0.01);
  }, 120_000);
});

/** The account's month in memory, as Counters keeps it in SQLite (windows, reservations, a lease's holds). */
function memoryMonth(): MonthCounts & {
  holdLease: (id: string, month: number, units: number, now: number, spent: boolean) => void;
} {
  const windows = new Map<string, number>();
  const reservations = new Map<string, { month: number; at: number }>();
  const live = (now: number) => [...reservations].filter(([, r]) => r.at > now - RESERVATION_TTL_MS);
  const reserve = (id: string, month: number, now: number) => {
    reservations.set(id, { month, at: now });
  };
  return {
    used: (n, s) => windows.get(`${n}:${s}`) ?? 0,
    add: (n, s, u = 1) => {
      windows.set(`${n}:${s}`, (windows.get(`${n}:${s}`) ?? 0) + u);
    },
    reserved: (month, now) => live(now).filter(([id, r]) => r.month === month && !id.includes('/$')).length,
    reserve,
    holdLease: (lease, month, units, now, spent) => {
      for (let n = 1; n <= units; n++) reserve(reservationOf(lease, `${spent ? '$' : '#'}${n}`), month, now);
    },
    take: (id, now) => {
      const lease = reservationOf(leaseOfReservation(id), '');
      const rows = live(now);
      const hit =
        rows.find(([k]) => k === id) ?? rows.find(([k]) => k.startsWith(`${lease}#`) || k.startsWith(`${lease}$`));
      if (!hit) return null;
      reservations.delete(hit[0]);
      return { month: hit[1].month, spent: hit[0] !== id && hit[0].startsWith(`${lease}$`) };
    },
  };
}

interface MonthOutcome {
  /** Compressions answered beyond the quota. */
  over: number;
  answered: number;
  /** What the month counts once every compression has settled. */
  counted: number;
  /** Units neither counted nor free once every lease ended (held, or still lent). */
  stranded: number;
}

async function monthSchedule(seed: number, faults: Pick<Faults, 'loss' | 'crash'>): Promise<MonthOutcome> {
  const rand = prng(seed);
  const sim = new Sim();
  const month = memoryMonth();
  const ledger = new HomeLedger(
    monthCounts(month, () => sim.now),
    memoryStore(),
  );
  // A reservation at the home sees lent units as taken, as the AccountMeter's HeldCounters make it.
  const held: MonthCounts = { ...month, used: (n, s) => month.used(n, s) + ledger.held(n, s) };
  let ids = 0;
  const locations = randomLocations(rand, () => 0.5 + rand() * 3);
  let answered = 0;
  let over = 0;
  /** Reservations not yet settled. */
  let running = 0;

  const ports: HomePorts = {
    clock: () => sim.now,
    sleep: (ms) => sim.sleep(ms),
    atomically: (fn) => fn(),
    recall: (loc) => network.call(loc, undefined),
    revoke: () => Promise.resolve([]),
    newId: () => `lease-${++ids}`,
  };

  const home = (request: ExchangeRequest): Promise<ExchangeAnswer<V, true>> =>
    serveExchange(ledger, ports, request, monthWindows('free', request.now), ledger.epoch, true as const, () => {
      const id = `r-${++ids}`;
      const r = reserveCompression(held, 'free', request.now, id);
      return { verdict: { ok: r.allowed, reservation: r.allowed ? id : undefined }, allowed: r.allowed };
    });

  const network = holders(sim, rand, faults.loss, locations, home, {
    reserves: true,
    windows: (at) => monthWindows('free', at),
  });

  /** The compression's end: the Worker settles its reservation with the location's holder (whichever instance runs now), which asks the home for one it does not hold. */
  function settle(spec: Location, id: string, ok: boolean) {
    sim.after(0.5, () => {
      const now = sim.now + spec.skew;
      if (network.client(spec.name).settle(id, ok)) return void running--;
      sim.after(network.net(spec.oneWay), () => {
        ledger.expire(sim.now);
        if (ok) commitCompression(held, 'free', now, id, ledger);
        else releaseCompression(held, 'free', now, id, ledger);
        running--;
      });
    });
  }

  // Mid-month, so that every location's skewed clock names the same month.
  const START = 10 * 86_400_000;
  const END = START + 60_000;
  sim.now = START;
  function arrive(spec: Location, at: number) {
    sim.at(at, () => {
      const burst = rand() < 0.05 ? 1 + Math.floor(rand() * 30) : 1;
      for (let i = 0; i < burst; i++) {
        network
          .client(spec.name)
          .spend(sim.now + spec.skew)
          .then(
            (d) => {
              const id = 'verdict' in d ? (d.verdict.ok ? d.verdict.reservation : undefined) : d.local.reservation;
              if (id === undefined) return;
              running++;
              // Most compressions take well under a second; some many seconds, beyond their lease.
              const work = rand() < 0.1 ? 2_000 + rand() * 15_000 : 20 + rand() * 800;
              const ok = rand() < 0.75;
              sim.after(work, () => {
                if (ok && ++answered > QUOTA) over++;
                settle(spec, id, ok);
              });
            },
            () => undefined,
          );
      }
      if (rand() < faults.crash) network.make(spec);
      const gap = (-Math.log(1 - rand()) / spec.rate) * 1000;
      if (sim.now + gap < END) arrive(spec, sim.now + gap);
    });
  }
  for (const l of locations) arrive(l, sim.now + rand() * 1000);
  // Past the last compression (17 s at most), and every lease's idle end (LEASE_IDLE_MS) and report.
  await sim.run(END + 30_000);
  expect(running).toBe(0);
  const start = monthWindows('free', sim.now)[0]!.start;
  const counted = month.used('month', start);
  const stranded = month.reserved(start, sim.now) + ledger.held('month', start);
  return { over, answered, counted, stranded };
}

describe('lease protocol simulation: the month', () => {
  it('never answers more compressions than the quota, and counts exactly those answered', async () => {
    let over = 0;
    let miscounted = 0;
    let stranded = 0;
    let full = 0;
    for (let seed = 1; seed <= MONTH_SCHEDULES; seed++) {
      const rand = prng(seed * 104_729);
      const faulty = seed % 4 !== 0;
      const out = await monthSchedule(
        seed,
        faulty ? { loss: rand() * 0.1, crash: rand() * 0.02 } : { loss: 0, crash: 0 },
      );
      over += out.over;
      if (out.answered >= QUOTA) full++;
      // A holder that restarted loses what it had not reported: counted as spent, never given away.
      if (faulty) miscounted += Math.max(0, out.answered - out.counted);
      else {
        miscounted += Math.abs(out.answered - out.counted);
        stranded += out.stranded;
      }
    }
    expect(over).toBe(0);
    expect(miscounted).toBe(0);
    expect(stranded).toBe(0);
    expect(full).toBeGreaterThan(MONTH_SCHEDULES / 4);
  }, 60_000);
});
