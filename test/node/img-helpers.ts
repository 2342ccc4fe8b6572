// Signed image URLs from outside, against a started service (`npm run dev` or self-hosted workerd): a
// signing secret made over the management API, URLs signed as a caller signs them, and requests sent
// under any Host name, as a client that reached the service by another name would send them.
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { expect } from 'vitest';
import { signedPath } from '../../src/img/signature.ts';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET `base` + `path` with this Host header (fetch does not let a caller choose it). */
export function getWithHost(
  base: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    // A connection of its own: a pooled one may be one the server has just closed (keep-alive).
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers: { ...headers, host },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A JSON answer, on a connection of its own. */
async function getJson(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; body: any }> {
  const answer = await getWithHost(url, url, new URL(url).host, headers, method);
  return { status: answer.status, body: JSON.parse(answer.body.toString('utf8')) };
}

/** A new signing secret of the account a `manage` key belongs to. */
export async function createSigningSecret(base: string, manageKey: string): Promise<string> {
  const res = await getJson(`${base}/api/v1/signing-secrets`, { authorization: `Bearer ${manageKey}` }, 'POST');
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { data: { secret: string } }).data.secret;
}

/** The account's month of compressions, as /account shows it to one of its tools keys. */
export async function monthUsed(base: string, toolsKey: string): Promise<number> {
  const res = await getJson(`${base}/api/v1/account`, { 'x-api-key': toolsKey });
  expect(res.status).toBe(200);
  return (res.body as { data: { usage: { month_compressions: { used: number } } } }).data.usage.month_compressions.used;
}

export interface SigningSetup {
  base: string;
  accountId: string;
  /** Makes the signing secret. */
  manageKey: string;
  /** Reads the account's month. */
  toolsKey: string;
  /** The loopback fixture origin (test/fixtures/origin.ts) the service may fetch from. */
  origin: string;
}

export const FIVE_HOSTS = ['localhost', '127.0.0.1', 'img.example.com', 'IMG.EXAMPLE.COM', 'other.example.net:8443'];

/**
 * One signed image URL asked for under five Host names: the first is a miss, charged; the other four are
 * hits of the same entry, so the month moves by one and the source is fetched once.
 */
export async function expectOneChargeAcrossHosts(s: SigningSetup): Promise<void> {
  const secret = await createSigningSecret(s.base, s.manageKey);
  const group = crypto.randomUUID();
  const path = await signedPath(
    s.accountId,
    secret,
    'w=40,q=70',
    `${s.origin}/img/gradient.png?w=80&h=60&group=${group}`,
  );
  const before = await monthUsed(s.base, s.toolsKey);
  const answers: Answer[] = [];
  for (const host of FIVE_HOSTS) answers.push(await getWithHost(s.base, path, host));
  expect(
    answers.map((a) => a.status),
    answers.map((a) => a.body.toString('utf8', 0, 300)).join('\n'),
  ).toEqual([200, 200, 200, 200, 200]);
  expect(answers.map((a) => a.headers['x-cache'])).toEqual(['MISS', 'HIT', 'HIT', 'HIT', 'HIT']);
  expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
  for (const a of answers) expect(a.body.equals(answers[0]!.body)).toBe(true);
  expect(await monthUsed(s.base, s.toolsKey)).toBe(before + 1);
  expect((await getJson(`${s.origin}/img/fetches?group=${group}`)).body).toEqual({ fetches: 1 });
}

/** Every file under `dir`, recursively, as paths relative to it. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}
