// One instance per (key, location), named from the key's hash and the location (src/metering/lease-holder-stub.ts),
// placed by Cloudflare near the location's first request. It holds leases from the key's homes: from its
// KeyMeter, the key's state and a slice of its Tools API windows; from its account's AccountMeter (through
// the KeyMeter, which lends the key's state), a slice of the Image API's month. Both are spent here without
// a round trip to a home (docs/design.md, "Leases"). Memory only: a restarted holder has no lease, and a home
// takes its slice back at expiry as if it had been spent (the month: held, as reservations are), so nothing
// is ever admitted twice.
import { DurableObject } from 'cloudflare:workers';
import type { KeyView } from '../accounts/records.ts';
import { IMAGE_TIERS, TOOLS_TIERS } from '../accounts/tiers.ts';
import type { Env } from '../env.ts';
import { keyMeter } from './key-meter-stub.ts';
import { LeaseClient, type HolderPorts } from './lease-client.ts';
import type { LeaseReport } from './lease.ts';
import { monthWindows, toolsWindows } from './rules.ts';
import type { Verdict } from './types.ts';
import { secondsUntil, toUnixSeconds } from './windows.ts';

type Client = LeaseClient<Verdict, KeyView>;

/** A location's figure for a window of `limit`, read from its lease. */
const rateOf = (limit: number, local: { remaining: number; reset: number }) => ({
  limit,
  remaining: local.remaining,
  reset: toUnixSeconds(local.reset),
});

export class LeaseHolder extends DurableObject<Env> {
  private client: Client | undefined;
  private month: Client | undefined;
  protected location = '';

  /** Tools API, as KeyMeter.tools answers it. */
  async tools(hash: string, location: string, now: number, count: boolean, withUsage = false): Promise<Verdict> {
    const client = this.clientFor(hash, location);
    const home = this.home(hash);
    // The snapshot must count this location's spends: give the lease back with the call.
    if (withUsage) return home.tools(hash, now, count, true, { location, reports: client.surrender() });
    const known = client.peek(now);
    if (!count) {
      if (!known) return home.tools(hash, now, false);
      return { outcome: 'ok', key: known.state, rate: this.rate(known.state, known.local) };
    }
    const decision = await client.spend(now);
    if ('verdict' in decision) {
      const v = decision.verdict;
      // A refusal given again from memory: its Retry-After counts from this request.
      if (v.outcome === 'rate_limit_exceeded' && v.rate)
        v.rate = { ...v.rate, retryAfter: secondsUntil(v.rate.reset * 1000, now) };
      return v;
    }
    return { outcome: 'ok', key: decision.state, rate: this.rate(decision.state, decision.local) };
  }

  /** Image API, as KeyMeter.reserve answers it: one unit of the account's month, from the slice held here when it can. */
  async reserve(hash: string, location: string, now: number): Promise<Verdict> {
    const month = this.monthFor(hash, location);
    const decision = await month.spend(now);
    if ('verdict' in decision) return this.withSlice(month, decision.verdict);
    const { state: key, local } = decision;
    return { outcome: 'ok', key, rate: this.monthRate(key, local), reservation: local.reservation };
  }

  /**
   * As KeyMeter.commit: a reservation of the slice held here is settled here (always charged: the slice's
   * units are the lease's), any other at the home, which may refuse it. The caller waits for this answer
   * before serving the image, so the report to the home is left to report(), called once it has answered.
   */
  async commit(hash: string, location: string, reservation: string, now: number): Promise<Verdict> {
    const month = this.monthFor(hash, location);
    if (!month.settle(reservation, true))
      return this.withSlice(month, await this.home(hash).commit(hash, reservation, now));
    return this.settled(month, now);
  }

  /**
   * Reports the slice's commits at once (the answer has gone: this waits for no one), so that the
   * account's month, its usage figures and its thresholds follow within one exchange.
   */
  async report(hash: string, location: string): Promise<void> {
    await this.monthFor(hash, location).flush();
  }

  /** As KeyMeter.release; a refused image is counted at the home either way. */
  async release(
    hash: string,
    location: string,
    reservation: string,
    now: number,
    refusedImage = false,
  ): Promise<Verdict> {
    const month = this.monthFor(hash, location);
    const home = this.home(hash);
    if (!month.settle(reservation, false))
      return this.withSlice(month, await home.release(hash, reservation, now, refusedImage));
    // The figure before the count, which may void the lease (the minute of refused uploads filled).
    const settled = this.settled(month, now);
    if (refusedImage) await home.failed(hash, now);
    return settled;
  }

  /**
   * The key's home recalls this location's slice of its windows, or revokes (`epoch`): nothing more is
   * spent under it. A revocation also drops the key's state held with the month's slice.
   */
  async surrender(epoch?: number): Promise<LeaseReport[]> {
    if (epoch !== undefined) this.month?.drop(epoch);
    return this.client?.surrender(epoch) ?? [];
  }

  /** The account's meter recalls this location's slice of the month. */
  async surrenderMonth(): Promise<LeaseReport[]> {
    return this.month?.surrender() ?? [];
  }

  /**
   * The home's answer with what this location's slice still has free added back: the home counts the
   * whole slice as taken (its lease's units, at least those this holder knows of), and this location may
   * spend its free part. The lease's base is then the home's fresh figure, so a unit the home gave back
   * (a reservation released there) shows here too.
   */
  private withSlice(month: Client, verdict: Verdict): Verdict {
    const l = month.ledger.lease;
    const rate = verdict.rate;
    const end = l?.windows[0]?.end;
    if (!l || !rate || end === undefined || Date.now() >= l.validUntil || rate.reset !== toUnixSeconds(end))
      return verdict;
    l.base = [rate.remaining + l.granted];
    return { ...verdict, rate: { ...rate, remaining: Math.min(rate.limit, rate.remaining + l.granted - l.spent) } };
  }

  private settled(month: Client, now: number): Verdict {
    const known = month.peek(now);
    return known
      ? { outcome: 'ok', key: known.state, rate: this.monthRate(known.state, known.local) }
      : { outcome: 'ok' };
  }

  private rate(key: KeyView, local: { remaining: number; reset: number }) {
    return rateOf(TOOLS_TIERS[key.tiers.tools].perMinute, local);
  }

  private monthRate(key: KeyView, local: { remaining: number; reset: number }) {
    return rateOf(IMAGE_TIERS[key.tiers.image].compressionsPerMonth, local);
  }

  private home(hash: string) {
    return keyMeter(this.env, hash);
  }

  private ports(location: string): Omit<HolderPorts<Verdict, KeyView>, 'windows' | 'exchange'> {
    return {
      location,
      clock: () => Date.now(),
      later: (ms, fn) => {
        setTimeout(fn, ms);
      },
    };
  }

  private clientFor(hash: string, location: string): Client {
    if (this.client && this.location === location) return this.client;
    this.location = location;
    this.client = new LeaseClient<Verdict, KeyView>({
      ...this.ports(location),
      windows: (at, key) => (key ? toolsWindows(key.tiers.tools, at) : []),
      exchange: (request) => this.home(hash).exchange(hash, request),
    });
    return this.client;
  }

  private monthFor(hash: string, location: string): Client {
    if (this.month && this.location === location) return this.month;
    this.location = location;
    this.month = new LeaseClient<Verdict, KeyView>({
      ...this.ports(location),
      reserves: true,
      windows: (at, key) => (key ? monthWindows(key.tiers.image, at) : []),
      exchange: (request) => this.home(hash).monthExchange(hash, request),
    });
    return this.month;
  }
}
