// Webhook test helpers: accounts with a manage key, endpoints on the loopback receiver
// (test/fixtures/receiver.ts), what the receiver got, and verification with the standardwebhooks package.
import { env } from 'cloudflare:test';
import { Webhook } from 'standardwebhooks';
import { expect, inject } from 'vitest';
import { keyStatement } from '../../src/accounts/provision.ts';
import type { Scope, ToolsTier, ImageTier } from '../../src/accounts/tiers.ts';
import { bearer, call, makeKey, type TestKey } from './helpers.ts';

export const RECEIVER = inject('webhookReceiver');

export interface Received {
  at: number;
  headers: Record<string, string>;
  body: string;
  status: number;
}

/** A fresh path on the receiver, so each test reads only its own deliveries. */
export const hookPath = (): string => `/hooks/${crypto.randomUUID()}`;

/** The next `times` requests to `path` (-1: all) answer `status` (500), after `delay` ms (0). */
export async function failNext(
  path: string,
  times: number,
  options: { status?: number; delay?: number } = {},
): Promise<void> {
  const query = `path=${encodeURIComponent(path)}&times=${times}&status=${options.status ?? 500}&delay=${options.delay ?? 0}`;
  const res = await fetch(`${RECEIVER}/_control/fail?${query}`, { method: 'POST' });
  expect(res.status).toBe(200);
}

export async function received(path: string): Promise<Received[]> {
  return (await (await fetch(`${RECEIVER}/_log?path=${encodeURIComponent(path)}`)).json()) as Received[];
}

/** Polls until `check` holds (real time: deliveries run on Durable Object alarms), or fails the test. */
export async function waitFor<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting; last value: ${JSON.stringify(value).slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An account with a manage key (and its tiers). */
export async function manageAccount(options: { tools?: ToolsTier; image?: ImageTier } = {}): Promise<TestKey> {
  return makeKey({
    tools: options.tools ?? 'developer',
    image: options.image ?? 'free',
    scopes: ['manage'],
    name: 'automation',
  });
}

/** Another key in the same account, made as the operator CLI makes it. */
export async function addKey(account: TestKey, scopes: Scope[]): Promise<TestKey> {
  const key = await keyStatement({ accountId: account.accountId, scopes, name: `k-${scopes.join('-')}` }, Date.now());
  await env.DB.prepare(key.statement.sql)
    .bind(...key.statement.params)
    .run();
  return { key: key.record.key, id: key.record.id, accountId: account.accountId };
}

export function manage(key: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  return call(path, {
    method: init.method ?? 'GET',
    headers: { ...bearer(key), ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

export interface Endpoint {
  id: string;
  secret: string;
  path: string;
}

export async function addEndpoint(key: string, events: string[], path = hookPath()): Promise<Endpoint> {
  const res = await manage(key, '/api/v1/webhooks', { method: 'POST', body: { url: RECEIVER + path, events } });
  const body = (await res.json()) as { data: { id: string; secret: string } };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return { id: body.data.id, secret: body.data.secret, path };
}

/**
 * One delivery per message: delivery is at least once, so a slow answer (the attempt's timeout passing on a
 * loaded machine) brings the same message again, under the same `webhook-id`.
 */
export function messages(all: Received[]): Received[] {
  const seen = new Set<string>();
  return all.filter((r) => !seen.has(r.headers['webhook-id']!) && seen.add(r.headers['webhook-id']!));
}

/** Verifies a received request with the standardwebhooks package; returns the parsed payload. */
export function verified(
  endpoint: { secret: string },
  r: Received,
): { type: string; timestamp: string; data: Record<string, unknown> } {
  const payload = new Webhook(endpoint.secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id']!,
    'webhook-timestamp': r.headers['webhook-timestamp']!,
    'webhook-signature': r.headers['webhook-signature']!,
  }) as { type: string; timestamp: string; data: Record<string, unknown> };
  return payload;
}
