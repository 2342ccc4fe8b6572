// One instance per (key, location), named from the key's hash and the location (src/metering/lease-holder-stub.ts),
// placed by Cloudflare near the location's first request. It holds a lease from the key's home (KeyMeter):
// the key's state and a slice of its Tools API windows, spent here without a round trip to the home
// (docs/design.md, "Leases"). Memory only: a restarted holder has no lease, and the home takes its slice back at
// expiry as if it had been spent, so nothing is ever admitted twice.
import { DurableObject } from 'cloudflare:workers';
import type { KeyView } from '../accounts/records.ts';
import type { Env } from '../env.ts';
import { LeaseClient } from '../metering/lease-client.ts';
import type { LeaseReport } from '../metering/lease.ts';
import { toolsWindows } from '../metering/rules.ts';
import type { Verdict } from '../metering/types.ts';
import { secondsUntil, toUnixSeconds } from '../metering/windows.ts';

export class LeaseHolder extends DurableObject<Env> {
  private client: LeaseClient<Verdict, KeyView> | undefined;
  private location = '';

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

  /** The home recalls this location's slice, or revokes (`epoch`): nothing more is spent under it. */
  async surrender(epoch?: number): Promise<LeaseReport[]> {
    return this.client?.surrender(epoch) ?? [];
  }

  private rate(key: KeyView, local: { remaining: number; reset: number }) {
    const [minute] = toolsWindows(key.tiers.tools, 0);
    return { limit: minute?.limit ?? 0, remaining: local.remaining, reset: toUnixSeconds(local.reset) };
  }

  private home(hash: string) {
    return this.env.METER.get(this.env.METER.idFromName(hash));
  }

  private clientFor(hash: string, location: string): LeaseClient<Verdict, KeyView> {
    if (this.client && this.location === location) return this.client;
    this.location = location;
    this.client = new LeaseClient<Verdict, KeyView>({
      location,
      clock: () => Date.now(),
      windows: (at, key) => (key ? toolsWindows(key.tiers.tools, at) : []),
      exchange: (request) => this.home(hash).exchange(hash, request),
      later: (ms, fn) => {
        setTimeout(fn, ms);
      },
    });
    return this.client;
  }
}
