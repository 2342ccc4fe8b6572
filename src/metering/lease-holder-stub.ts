// The lease holder of a key at a location (src/metering/lease-holder.ts), and the location of a request.
// Apart from the class so that routes need only its type, not 'cloudflare:workers'.
import type { LeaseHolder } from './lease-holder.ts';
import { type Env, objectStub } from '../env.ts';

/** The location when the platform names none (self-hosted, tests): one location, one holder per key. */
export const SINGLE_LOCATION = 'local';

/** Where the request came in: Cloudflare's data centre (`cf.colo`), else the single location. */
export function locationOf(request: Request): string {
  const colo = (request as { cf?: { colo?: unknown } }).cf?.colo;
  return typeof colo === 'string' && /^[A-Za-z0-9-]{1,16}$/.test(colo) ? colo : SINGLE_LOCATION;
}

/** The key's lease holder at `location`, named from the key's hash and the location. */
export function nearbyMeter(env: Env, hash: string, location: string): DurableObjectStub<LeaseHolder> {
  return nearbyMeterNamed(env, holderName(hash, location));
}

/** A lease holder's name: the month's leases know their holders by it. */
export const holderName = (hash: string, location: string): string => `${hash}@${location}`;

export function nearbyMeterNamed(env: Env, name: string): DurableObjectStub<LeaseHolder> {
  return objectStub<LeaseHolder>(env.LEASE_HOLDER, name);
}
