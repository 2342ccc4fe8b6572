// Authentication and metering for both APIs: read the key, hash it, and ask its Durable Object in one
// round trip whether the request may proceed.
import { createMiddleware } from 'hono/factory';
import { hashKey, isWellFormedKey } from '../accounts/keys.ts';
import { SQL } from '../db/statements.ts';
import type { KeyMeter } from '../metering/key-meter.ts';
import { keyMeter } from '../metering/key-meter-stub.ts';
import { locationOf, nearbyMeter } from '../metering/lease-holder-stub.ts';
import { clock, type Env } from '../env.ts';
import { enforce, unauthorized } from '../metering/enforce.ts';
import type { Verdict } from '../metering/types.ts';
import type { AppEnv } from './context.ts';
import { knownKeys, unknownKeys } from './unknown-keys.ts';

function bearer(headers: Headers): string | undefined {
  const value = headers.get('authorization');
  if (value === null) return undefined;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(value);
  if (!match?.[1]) throw unauthorized('the Authorization header must be "Bearer <API key>"');
  return match[1];
}

/** Tools API: `x-api-key` (preferred) or `Authorization: Bearer`. */
export function toolsKeyFrom(headers: Headers): string {
  const header = headers.get('x-api-key')?.trim();
  const key = header || bearer(headers);
  if (!key) throw unauthorized('missing API key: send it in the x-api-key header or as Authorization: Bearer <key>');
  return key;
}

/** Image API: `Authorization: Bearer` only; a key in x-api-key is refused (docs/decisions.md). */
export function imageKeyFrom(headers: Headers): string {
  const key = bearer(headers);
  if (key) return key;
  if (headers.get('x-api-key')) {
    throw unauthorized('the image API takes the key as Authorization: Bearer <key>, not in x-api-key');
  }
  throw unauthorized('missing API key: send it as Authorization: Bearer <key>');
}

/**
 * `request`: its Tools API calls and its compressions' reservations go to the key's lease holder at the
 * request's location (docs/design.md, "Leases").
 */
export async function meterFor(
  env: Env,
  key: string,
  request?: Request,
): Promise<{ hash: string; meter: DurableObjectStub<KeyMeter> }> {
  // A malformed key never reaches a Durable Object: no storage, no D1 read for junk.
  if (!isWellFormedKey(key)) {
    throw unauthorized('malformed API key: keys are "sr_live_" followed by 32 letters and digits');
  }
  const hash = await hashKey(key);
  const now = clock(env);
  // Nor does a well-formed key that does not exist: reaching a Durable Object makes its SQLite file, even
  // one that never touches its storage (measured on workerd), so a guessed key would leave a file behind.
  // Whether the key exists is asked of D1 once per isolate and KNOWN_KEY_TTL_MS; the rest (revoked, its
  // scopes, its windows) stays the object's to answer, on every request.
  if (unknownKeys.has(hash, now)) throw unauthorized(`invalid API key: ${UNKNOWN_KEY_REASON}`);
  if (!knownKeys.has(hash, now)) {
    const row = await env.DB.prepare(SQL.keyExists).bind(hash).first();
    if (row === null) {
      unknownKeys.add(hash, now);
      throw unauthorized(`invalid API key: ${UNKNOWN_KEY_REASON}`);
    }
    knownKeys.add(hash, now);
  }
  const location = request && locationOf(request);
  return { hash, meter: rememberingUnknown(keyMeter(env, hash), hash, env, location) };
}

/** The reason the meter gives for a hash with no key (src/metering/key-meter.ts). */
const UNKNOWN_KEY_REASON = 'unknown API key';

const isUnknownKey = (verdict: Verdict): boolean =>
  verdict.outcome === 'unauthorized' && verdict.key === undefined && verdict.reason === UNKNOWN_KEY_REASON;

/**
 * The meter's stub, except that the two calls that authenticate (`tools`, `reserve`) put the hash in the
 * negative cache when the meter answers that it has no key, whichever route made the call, and that with a
 * `location` the metering calls go to the key's lease holder there. Every other member is the stub's own.
 */
function rememberingUnknown(
  stub: DurableObjectStub<KeyMeter>,
  hash: string,
  env: Env,
  location?: string,
): DurableObjectStub<KeyMeter> {
  const observe = (verdict: Verdict): Verdict => {
    if (isUnknownKey(verdict)) unknownKeys.add(hash, clock(env));
    return verdict;
  };
  const nearby = location === undefined ? undefined : nearbyMeter(env, hash, location);
  const tools = async (...[h, now, count, usage]: Parameters<KeyMeter['tools']>) =>
    observe(
      (await (nearby
        ? nearby.tools(h, location as string, now, count, usage)
        : stub.tools(h, now, count, usage))) as Verdict,
    );
  const reserve = async (...[h, now]: Parameters<KeyMeter['reserve']>) =>
    observe((await (nearby ? nearby.reserve(h, location as string, now) : stub.reserve(h, now))) as Verdict);
  const commit = async (...[h, id, now]: Parameters<KeyMeter['commit']>) =>
    (await (nearby ? nearby.commit(h, location as string, id, now) : stub.commit(h, id, now))) as Verdict;
  const release = async (...[h, id, now, refused]: Parameters<KeyMeter['release']>) =>
    (await (nearby
      ? nearby.release(h, location as string, id, now, refused)
      : stub.release(h, id, now, refused))) as Verdict;
  const report = async (...[h]: Parameters<KeyMeter['report']>) =>
    nearby ? nearby.report(h, location as string) : stub.report(h);
  const routed: Record<string | symbol, unknown> = { tools, reserve, commit, release, report };
  return new Proxy(stub, {
    get(target, prop) {
      if (Object.hasOwn(routed, prop)) return routed[prop];
      const value: unknown = Reflect.get(target, prop);
      // Reflect.apply, not value.apply: on an RPC stub any property name, `apply` too, is a remote call.
      return typeof value === 'function' ? (...args: unknown[]) => Reflect.apply(value, target, args) : value;
    },
  });
}

export interface ToolsAuthOptions {
  /** false only for /health, which is never counted. */
  count: boolean;
  /** Ask the meter for the full usage snapshot (/account). */
  usage?: boolean;
}

export const toolsAuth = (options: ToolsAuthOptions) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const { hash, meter } = await meterFor(c.env, toolsKeyFrom(c.req.raw.headers), c.req.raw);
    const verdict = await meter.tools(hash, clock(c.env), options.count, options.usage ?? false);
    // Scope refusals carry no rate headers: the key is not a tools key, so it has no tools window.
    if (verdict.outcome !== 'forbidden') c.set('rate', verdict.rate);
    enforce(verdict);
    c.set('key', verdict.key!);
    c.set('keyHash', hash);
    c.set('usage', verdict.usage);
    await next();
  });
