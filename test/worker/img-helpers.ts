// Signed image URLs in tests: an account with a signing secret and an image key (to read its month in
// /account, as its holder would), URLs signed as a caller would sign them, and calls with the fixture
// origin let through (FETCH_TEST_ORIGIN).
import { env } from 'cloudflare:test';
import { inject } from 'vitest';
import type { ImageTier } from '../../src/accounts/tiers.ts';
import { createSecret } from '../../src/signing/secrets.ts';
import { signedPath } from '../../src/img/signature.ts';
import { call, makeKey, toolsHeaders, type TestKey } from './helpers.ts';

export const ORIGIN = inject('fixtureOrigin');

export interface SigningAccount extends TestKey {
  secret: string;
}

export async function signingAccount(image: ImageTier = 'pro'): Promise<SigningAccount> {
  const k = await makeKey({ image, scopes: ['image', 'tools'] });
  const created = await createSecret(env.DB, k.accountId, Date.now());
  if (!created.ok) throw new Error('no secret');
  return { ...k, secret: created.created.secret };
}

/** A fresh gradient source on the fixture origin, its fetches counted under its own group. */
export const gradient = (w = 64, h = 48): { url: string; group: string } => {
  const group = crypto.randomUUID();
  return { url: `${ORIGIN}/img/gradient.png?w=${w}&h=${h}&group=${group}`, group };
};

export async function fetchesOf(group: string): Promise<number> {
  // Once more if the pooled connection was the one the origin had just closed (its keep-alive is 1 s).
  const res = await fetch(`${ORIGIN}/img/fetches?group=${group}`).catch(() =>
    fetch(`${ORIGIN}/img/fetches?group=${group}`),
  );
  return ((await res.json()) as { fetches: number }).fetches;
}

export const signed = (a: SigningAccount, options: string, url: string): Promise<string> =>
  signedPath(a.accountId, a.secret, options, url);

export function getImage(
  path: string,
  headers: Record<string, string> = {},
  envOverrides: Record<string, unknown> = {},
): Promise<Response> {
  return call(path, { headers, env: { FETCH_TEST_ORIGIN: ORIGIN, ...envOverrides } });
}

/** The account's month as /account shows it to one of its keys. */
export async function monthUsed(a: TestKey): Promise<number> {
  const res = await call('/api/v1/account', { headers: toolsHeaders(a.key) });
  return ((await res.json()) as { data: { usage: { month_compressions: { used: number } } } }).data.usage
    .month_compressions.used;
}

export async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  const body = (await res.json()) as { error: { code: string; message: string; details?: Record<string, unknown> } };
  if (res.status !== status || body.error.code !== code)
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(body)}`);
  return body.error;
}
