// The Worker of the metering-edge bench only (`npm run bench -- metering-edge`): the real app and Durable
// Objects, with the distances of three locations injected around their stubs. The production entry
// (src/index.ts) has no such path. The request names its location in `x-bench-colo` (Cloudflare's
// `cf.colo` in production), and the metering decision's time goes back in `x-bench-meter-ms`. With
// `x-bench-month: home` a compression's reservation goes to the key's home as it did before the month was
// leased, so that both are measured side by side.
import {
  AccountMeter as BaseAccountMeter,
  KeyMeter as BaseKeyMeter,
  LeaseHolder as BaseLeaseHolder,
  WebhookDispatcher,
} from '../../src/index.ts';
import worker from '../../src/index.ts';
import type { Env } from '../../src/env.ts';
import { keyMeter } from '../../src/metering/key-meter-stub.ts';
import { HOME_RTT_MS, NEARBY_RTT_MS } from './metering-edge-distances.ts';

export { WebhookDispatcher };

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Half the round trip before the call and half after it, as a message and its answer would travel; a
 * round trip of a few milliseconds is one pause before the call (a timer's own wake-up costs about as much).
 */
async function across<T>(rtt: number, call: () => Promise<T>): Promise<T> {
  if (rtt <= 0) return call();
  if (rtt <= 2) {
    await pause(rtt);
    return call();
  }
  await pause(rtt / 2);
  const out = await call();
  await pause(rtt / 2);
  return out;
}

const locationOfName = (name: string) => name.slice(name.lastIndexOf('@') + 1);

/**
 * `env` whose namespace `binding` delays every stub call by `rtt(args, name)`; `took` hears each call's
 * time, delay included.
 */
function delayed(
  env: Env,
  binding: 'METER' | 'LEASE_HOLDER',
  rtt: (args: unknown[], name: string) => number,
  took?: (ms: number) => void,
): Env {
  const ns = env[binding] as unknown as DurableObjectNamespace;
  const names = new Map<string, string>();
  const wrapped = new Proxy(ns, {
    get(target, prop) {
      if (prop === 'idFromName')
        return (name: string) => {
          const id = target.idFromName(name);
          names.set(id.toString(), name);
          return id;
        };
      if (prop === 'get')
        return (id: DurableObjectId) => {
          const stub = target.get(id) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
          const name = names.get(id.toString()) ?? '';
          return new Proxy(stub, {
            get(s, method) {
              const fn = Reflect.get(s, method);
              if (typeof fn !== 'function') return fn;
              return async (...args: unknown[]) => {
                const t0 = performance.now();
                try {
                  return await across(rtt(args, name), async () => Reflect.apply(fn, s, args) as unknown);
                } finally {
                  took?.(performance.now() - t0);
                }
              };
            },
          });
        };
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...env, [binding]: wrapped };
}

/** The holder's calls to the home travel its location's distance. */
export class LeaseHolder extends BaseLeaseHolder {
  constructor(ctx: DurableObjectState, env: Env) {
    let self: LeaseHolder | undefined;
    super(
      ctx,
      delayed(env, 'METER', () => HOME_RTT_MS[self?.location ?? ''] ?? 0),
    );
    self = this;
  }
}

/** The account's calls to a holder (the month's recalls) travel that holder's distance. */
export class AccountMeter extends BaseAccountMeter {
  constructor(ctx: DurableObjectState, env: Env) {
    super(
      ctx,
      delayed(env, 'LEASE_HOLDER', (_args, name) => HOME_RTT_MS[locationOfName(name)] ?? 0),
    );
  }
}

/** `env` whose holders pass a compression's reservation, commit and release straight to the key's home. */
function monthAtHome(env: Env): Env {
  const meter = (hash: string) => keyMeter(env, hash);
  const routed: Record<string, (...a: never[]) => unknown> = {
    reserve: (h: string, _at: string, now: number) => meter(h).reserve(h, now),
    commit: (h: string, _at: string, id: string, now: number) => meter(h).commit(h, id, now),
    release: (h: string, _at: string, id: string, now: number, refused?: boolean) =>
      meter(h).release(h, id, now, refused),
  };
  const holders = new Proxy(env.LEASE_HOLDER, {
    get(target, prop) {
      if (prop !== 'get') {
        const value: unknown = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (id: DurableObjectId) =>
        new Proxy(target.get(id), {
          get: (stub, method) =>
            typeof method === 'string' && method in routed ? routed[method] : Reflect.get(stub, method),
        });
    },
  });
  return { ...env, LEASE_HOLDER: holders };
}

/** The home's calls to a holder (recall, revocation) travel that holder's distance. */
export class KeyMeter extends BaseKeyMeter {
  constructor(ctx: DurableObjectState, env: Env) {
    super(
      ctx,
      delayed(env, 'LEASE_HOLDER', (_args, name) => HOME_RTT_MS[locationOfName(name)] ?? 0),
    );
  }
}

export default {
  ...worker,
  /**
   * The request's location from `x-bench-colo`; its calls to its lease holder travel NEARBY_RTT_MS and
   * its direct calls to the key's home (the Image API's reserve and commit) its location's distance. The
   * time of those calls (the metering decision, from the Worker's side) is answered in `x-bench-meter-ms`.
   */
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const colo = request.headers.get('x-bench-colo') ?? '';
    let meterMs = 0;
    const took = (ms: number) => {
      meterMs += ms;
    };
    const near = delayed(env, 'LEASE_HOLDER', () => NEARBY_RTT_MS, took);
    const located = new Request(request, { cf: { colo } } as RequestInit);
    const distant = delayed(near, 'METER', () => HOME_RTT_MS[colo] ?? 0, took);
    const atHome = request.headers.get('x-bench-month') === 'home';
    const response = await worker.fetch(located, atHome ? monthAtHome(distant) : distant, ctx);
    const out = new Response(response.body, response);
    out.headers.set('x-bench-meter-ms', meterMs.toFixed(2));
    return out;
  },
};
