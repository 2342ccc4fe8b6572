// Test helpers: provisioning through the same statements the CLI runs, and calling the Worker with a
// controllable clock.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { expect } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import { accountStatement, keyStatement } from '../../src/accounts/provision.ts';
import type { ImageTier, Scope, ToolsTier } from '../../src/accounts/tiers.ts';
import { SQL, type Statement } from '../../src/db/statements.ts';
import worker from '../../src/index.ts';

let seq = 0;

const run = (s: Statement) =>
  env.DB.prepare(s.sql)
    .bind(...s.params)
    .run();

export interface TestKey {
  key: string;
  id: string;
  accountId: string;
}

export async function makeKey(
  options: { image?: ImageTier; tools?: ToolsTier; scopes?: Scope[]; name?: string } = {},
): Promise<TestKey> {
  const account = accountStatement(
    {
      email: `user${++seq}-${crypto.randomUUID()}@example.com`,
      name: `Test ${seq}`,
      imageTier: options.image ?? 'free',
      toolsTier: options.tools ?? 'free',
    },
    Date.now(),
  );
  await run(account.statement);
  const key = await keyStatement(
    { accountId: account.record.id, scopes: options.scopes ?? ['image', 'tools'], name: options.name ?? 'test' },
    Date.now(),
  );
  await run(key.statement);
  return { key: key.record.key, id: key.record.id, accountId: account.record.id };
}

/** A clock tests move by hand. Starts at a fixed instant well inside a UTC minute. */
export class TestClock {
  now: number;
  constructor(start = Date.UTC(2026, 10, 21, 12, 0, 5)) {
    this.now = start;
  }
  advance(ms: number): void {
    this.now += ms;
  }
}

/**
 * Calls the Worker's fetch handler in this isolate. `path` may be a full URL (other hosts); `clock`
 * is injected into the env; `env` replaces bindings or vars for this one call.
 */
export async function call(
  path: string,
  init: RequestInit & { clock?: TestClock; env?: Record<string, unknown> } = {},
): Promise<Response> {
  const { clock, env: overrides, ...rest } = init;
  const request = new Request(new URL(path, 'https://api.shrinkray.test'), rest);
  // A client address, as Cloudflare's edge sets one, unless the test sends its own.
  if (!request.headers.has('cf-connecting-ip')) request.headers.set('cf-connecting-ip', '203.0.113.10');
  const ctx = createExecutionContext();
  const testEnv = { ...env, ...overrides, ...(clock ? { NOW: () => clock.now } : {}) } as typeof env;
  const response = await worker.fetch(request, testEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** Spends `n` units of the account's month on the key's own meter, as n answered compressions would. */
export async function spendMonth(k: TestKey, n: number, now: number): Promise<void> {
  const hash = await hashKey(k.key);
  const stub = env.METER.get(env.METER.idFromName(hash));
  for (let i = 0; i < n; i++) await stub.commit(hash, (await stub.reserve(hash, now)).reservation!, now);
}

export const toolsHeaders = (key: string): Record<string, string> => ({ 'x-api-key': key });
export const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });

/** What the operator CLI does: change D1, then tell the Worker to refresh the affected keys. */
export async function revoke(key: TestKey): Promise<void> {
  await env.DB.prepare(SQL.revokeKey).bind(Date.now(), key.id).run();
  await adminRefresh({ key_ids: [key.id] });
}

export async function setToolsTier(key: TestKey, tier: ToolsTier): Promise<void> {
  await env.DB.prepare(SQL.setToolsTier).bind(tier, key.accountId).run();
  await adminRefresh({ account_id: key.accountId });
}

export async function adminRefresh(body: unknown): Promise<Response> {
  const res = await call('/internal/keys/refresh', {
    method: 'POST',
    headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`refresh failed: ${res.status} ${await res.text()}`);
  return res;
}

/**
 * Runs `work` with console[kind] captured instead of printed: for tests that provoke a logged error on
 * purpose, so the log line can be checked and the test output stays clean.
 */
export async function captureConsole<T>(
  kind: 'error' | 'warn',
  work: () => Promise<T>,
): Promise<{ result: T; lines: string[] }> {
  const original = console[kind];
  const lines: string[] = [];
  console[kind] = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  try {
    return { result: await work(), lines };
  } finally {
    console[kind] = original;
  }
}

/**
 * A host of each kind every URL we fetch must not name (the fetch rules, src/fetch/address.ts): a private
 * address, the cloud metadata service's link-local one, a local name, IPv6 loopback, and loopback written
 * in hex. Each feature that takes a URL (image sources, SSO issuers, webhook endpoints) is tested with all.
 */
export const FORBIDDEN_HOSTS = ['10.0.0.1', '169.254.169.254', 'localhost', '[::1]', '0x7f.1'];

/** Inputs refused alike: the parameter the error names, its message, then the inputs. */
export type Refusal = [param: string, message: string, ...inputs: string[]];

/**
 * Sends each input and expects it refused as bad input: 400 bad_request naming `param`, with `message`
 * (a string: exactly that; a pattern: matching it; none: any).
 */
export async function expectEachRefused(
  inputs: readonly string[],
  send: (input: string) => Promise<Response>,
  expected: { param: string; message?: string | RegExp },
): Promise<void> {
  const { param, message } = expected;
  for (const input of inputs) {
    const res = await send(input);
    expect(res.status, input).toBe(400);
    expect((await res.json<{ error: unknown }>()).error, input).toEqual({
      code: 'bad_request',
      param,
      message: typeof message === 'string' ? message : expect.stringMatching(message ?? /./),
    });
  }
}

/**
 * Waits for the next minute when fewer than `margin` ms of this one are left: a test that compares two
 * answers of one minute's window (X-RateLimit-Remaining) must not straddle its edge.
 */
export async function awayFromMinuteEdge(margin = 5_000): Promise<void> {
  const untilNextMinute = 60_000 - (Date.now() % 60_000);
  if (untilNextMinute < margin) await new Promise((r) => setTimeout(r, untilNextMinute + 50));
}
