// A discrete-event simulation of the lease protocol: the real HomeLedger, LeaseClient, serveExchange and
// revokeLeases (src/metering/lease*.ts) and the real Tools API rule (meterTools), on virtual time with a
// seeded PRNG. Thousands of random schedules: locations far and near, messages lost either way, holders
// restarting mid-lease, clock skew and drift, bursts, recalls racing renewals, revocation during a burst.
// Every schedule must admit no request over any window's limit and none after a revocation is
// acknowledged; the schedules without faults must leave at most 1 % of a full window unused.
import { describe, expect, it } from 'vitest';
import { LeaseClient, type ExchangeAnswer, type ExchangeRequest } from '../../src/metering/lease-client.ts';
import { revokeLeases, serveExchange, type HomePorts } from '../../src/metering/lease-home.ts';
import { HomeLedger, type LeaseRecord, type LeaseStore } from '../../src/metering/lease.ts';
import { meterTools, toolsWindows, type ToolsCounts } from '../../src/metering/rules.ts';

const LIMIT = 100; // the free tier's minute
const SCHEDULES = 1200;

/** mulberry32: small, fast, seeded. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

type V = { ok: boolean; until?: number; decidedAt?: number };

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
  const records = new Map<string, LeaseRecord>();
  let epoch = 0;
  const store: LeaseStore = {
    records: () => [...records.values()],
    // By reference, as the Durable Object's cache keeps them.
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
  const ledger = new HomeLedger(counts, store);
  // A synchronous spend sees lent units as used, as the KeyMeter's HeldCounters make it.
  const held = ledger.heldCounts();
  const heldCounts: ToolsCounts = { used: (n, s) => held.used(n, s), add: counts.add, addDaily: () => undefined };
  let revoked = false;
  let revokedAck = Infinity;
  let ids = 0;

  const locations = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, i) => ({
    name: `L${i}`,
    oneWay: 0.5 + rand() * 90,
    skew: (rand() - 0.5) * 20_000,
    drift: 1 + (rand() - 0.5) * 0.01,
    rate: rand() * 3, // requests per second
  }));
  const admitted = new Map<number, number>();
  const demand = new Map<number, number>();
  let over = 0;
  let afterRevoke = 0;

  const homePorts = (): HomePorts => ({
    clock: () => sim.now,
    sleep: (ms) => sim.sleep(ms),
    atomically: (fn) => fn(),
    recall: (loc) => call(loc, undefined),
    revoke: (loc, e) => call(loc, e),
    newId: () => `lease-${++ids}`,
  });

  // Each location's holder instance; a restart replaces it, and answers to the old one are dropped.
  const holders = new Map<string, { gen: number; client: LeaseClient<V, true> }>();
  const net = (oneWay: number) => oneWay * (0.8 + rand() * 0.4);

  function call(loc: string, e: number | undefined) {
    const spec = locations.find((l) => l.name === loc)!;
    return new Promise<ReturnType<LeaseClient<V, true>['surrender']>>((resolve, reject) => {
      sim.after(net(spec.oneWay), () => {
        if (rand() < faults.loss) return; // lost: the home's wait times out
        const reports = holders.get(loc)!.client.surrender(e);
        sim.after(net(spec.oneWay), () => (rand() < faults.loss ? reject(new Error('lost')) : resolve(reports)));
      });
    });
  }

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

  function makeHolder(spec: (typeof locations)[number]) {
    const gen = (holders.get(spec.name)?.gen ?? 0) + 1;
    const client: LeaseClient<V, true> = new LeaseClient<V, true>({
      location: spec.name,
      clock: () => sim.now * spec.drift + spec.skew,
      windows: (at) => toolsWindows('free', at),
      later: (ms, fn) => sim.after(ms / spec.drift, () => holders.get(spec.name)?.gen === gen && fn()),
      exchange: (request) =>
        new Promise((resolve, reject) => {
          sim.after(net(spec.oneWay), () => {
            if (rand() < faults.loss) return void sim.after(spec.oneWay * 2, () => reject(new Error('lost')));
            void home(request).then((answer) =>
              sim.after(net(spec.oneWay), () => {
                if (holders.get(spec.name)?.gen !== gen) return;
                if (rand() < faults.loss) reject(new Error('lost'));
                else resolve(answer);
              }),
            );
          });
        }),
    });
    holders.set(spec.name, { gen, client });
  }
  for (const l of locations) makeHolder(l);

  // From 5 s before a minute starts: with faults, across that boundary; without, to 5 s after the minute
  // ends (one whole window, whose unused units are measured).
  const clean = faults.loss === 0 && faults.crash === 0 && faults.revokeAt === null;
  const END = clean ? 125_000 : 95_000;
  sim.now = 55_000;
  function arrive(spec: (typeof locations)[number], at: number) {
    sim.at(at, () => {
      const burst = rand() < 0.05 ? 1 + Math.floor(rand() * 40) : 1;
      for (let i = 0; i < burst; i++) {
        const now = sim.now + spec.skew; // the Worker beside the holder shares its clock
        const minute = Math.floor(now / 60_000) * 60_000;
        demand.set(minute, (demand.get(minute) ?? 0) + 1);
        holders
          .get(spec.name)!
          .client.spend(now)
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
      if (rand() < faults.crash) makeHolder(spec);
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
