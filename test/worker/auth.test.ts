import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/accounts/keys.ts';
import { SQL } from '../../src/db/statements.ts';
import { UNKNOWN_KEY_CACHE_MAX, UNKNOWN_KEY_TTL_MS, UnknownKeys, unknownKeys } from '../../src/http/unknown-keys.ts';
import { bearer, call, makeKey, revoke, setToolsTier, TestClock, toolsHeaders } from './helpers.ts';
import { compressCall, photo, pngOf } from './image-fixtures.ts';

async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<{ error: { code: string; message: string }; meta: { request_id: string } }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = await res.json<any>();
  expect(body.error.code).toBe(code);
  expect(body.error.message).toEqual(expect.any(String));
  expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  return body;
}

describe('Tools API authentication', () => {
  it('accepts the key in x-api-key', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    expect((await call('/api/v1/account', { headers: toolsHeaders(k.key) })).status).toBe(200);
  });

  it('accepts the key as Authorization: Bearer, with any case of the scheme', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    expect((await call('/api/v1/account', { headers: bearer(k.key) })).status).toBe(200);
    expect((await call('/api/v1/account', { headers: { Authorization: `bearer ${k.key}` } })).status).toBe(200);
  });

  it('prefers x-api-key when both headers are sent', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const res = await call('/api/v1/account', {
      headers: { 'x-api-key': k.key, Authorization: 'Bearer sr_live_' + 'x'.repeat(32) },
    });
    expect(res.status).toBe(200);
  });

  it('401 for a missing key, with a challenge and no rate headers', async () => {
    const res = await call('/api/v1/account');
    const body = await expectError(res, 401, 'unauthorized');
    expect(body.error.message).toMatch(/missing API key/);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('401 for malformed keys, never echoing them', async () => {
    // 'abc?', not 'abc': the body's random request id may contain 'abc', never '?'.
    for (const bad of [
      'abc?',
      'sr_live_short',
      'sr_test_' + 'a'.repeat(32),
      'sr_live_' + 'a'.repeat(31) + '!',
      'sr_live_' + 'a'.repeat(33),
    ]) {
      const res = await call('/api/v1/account', { headers: { 'x-api-key': bad } });
      const body = await expectError(res, 401, 'unauthorized');
      expect(body.error.message).toMatch(/malformed/);
      expect(JSON.stringify(body)).not.toContain(bad);
    }
  });

  it('401 for an Authorization header that is not Bearer', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    await expectError(
      await call('/api/v1/account', { headers: { Authorization: `Basic ${btoa(k.key + ':')}` } }),
      401,
      'unauthorized',
    );
  });

  it('401 for a well-formed but unknown key', async () => {
    const res = await call('/api/v1/account', { headers: toolsHeaders('sr_live_' + 'Q'.repeat(32)) });
    const body = await expectError(res, 401, 'unauthorized');
    expect(body.error.message).toMatch(/unknown/);
  });

  it('a revoked key is refused on the very next request', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    expect((await call('/api/v1/account', { headers: toolsHeaders(k.key) })).status).toBe(200);
    await revoke(k);
    const body = await expectError(
      await call('/api/v1/account', { headers: toolsHeaders(k.key) }),
      401,
      'unauthorized',
    );
    expect(body.error.message).toMatch(/revoked/);
    await expectError(await call('/api/v1/health', { headers: toolsHeaders(k.key) }), 401, 'unauthorized');
  });

  it('403 for an image-only key, without tools rate headers', async () => {
    const k = await makeKey({ scopes: ['image'] });
    const res = await call('/api/v1/account', { headers: toolsHeaders(k.key) });
    const body = await expectError(res, 403, 'forbidden');
    expect(body.error.message).toMatch(/tools API/);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('a tier change binds on the next request', async () => {
    const k = await makeKey({ scopes: ['tools'], tools: 'free' });
    const before = await call('/api/v1/account', { headers: toolsHeaders(k.key) });
    expect(before.headers.get('x-ratelimit-limit')).toBe('100');
    await setToolsTier(k, 'developer');
    const after = await call('/api/v1/account', { headers: toolsHeaders(k.key) });
    expect(after.headers.get('x-ratelimit-limit')).toBe('1000');
    expect((await after.json<any>()).data.tiers.tools).toBe('developer');
  });
});

describe('Image API authentication', () => {
  /** POST /compress with no upload: what authentication answers before any body is read. */
  const noUpload = (headers?: Record<string, string>) => call('/api/v1/compress', { method: 'POST', headers });

  it('takes the key as Bearer and reports the month quota', async () => {
    const k = await makeKey({ scopes: ['image'], image: 'free' });
    const res = await noUpload(bearer(k.key));
    // Authenticated, but no upload: a 400 that spends nothing.
    await expectError(res, 400, 'bad_request');
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('100');
  });

  it('refuses the key in x-api-key, pointing to Bearer', async () => {
    const k = await makeKey({ scopes: ['image'] });
    const body = await expectError(await noUpload(toolsHeaders(k.key)), 401, 'unauthorized');
    expect(body.error.message).toMatch(/Bearer/);
  });

  it('401 for missing, malformed, unknown and revoked keys', async () => {
    await expectError(await noUpload(), 401, 'unauthorized');
    await expectError(await noUpload(bearer('nope')), 401, 'unauthorized');
    await expectError(await noUpload(bearer('sr_live_' + 'z'.repeat(32))), 401, 'unauthorized');
    const k = await makeKey({ scopes: ['image'] });
    await revoke(k);
    await expectError(await noUpload(bearer(k.key)), 401, 'unauthorized');
  });

  it('403 for a tools-only key', async () => {
    const k = await makeKey({ scopes: ['tools'] });
    const body = await expectError(await noUpload(bearer(k.key)), 403, 'forbidden');
    expect(body.error.message).toMatch(/image compression API/);
  });
});

describe('keys at rest', () => {
  it('D1 holds only the hash and the 12-character prefix, never the key', async () => {
    const k = await makeKey();
    const row = await env.DB.prepare('SELECT * FROM api_keys WHERE id = ?').bind(k.id).first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(k.key.slice(8));
    expect(row!.prefix).toBe(k.key.slice(0, 12));
    expect(row!.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('unknown keys', () => {
  it('leave no storage behind in their Durable Object', async () => {
    const { runInDurableObject } = await import('cloudflare:test');
    const { hashKey } = await import('../../src/accounts/keys.ts');
    const guess = 'sr_live_' + 'G'.repeat(32);
    expect((await call('/api/v1/account', { headers: toolsHeaders(guess) })).status).toBe(401);
    const stub = env.METER.get(env.METER.idFromName(await hashKey(guess)));
    const tables = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'")
        .toArray(),
    );
    expect(tables).toEqual([]);
  });
});

/** The METER binding, counting the stubs asked for: each is one Durable Object call, and at most one D1 read. */
function countingMeter() {
  const lookups: string[] = [];
  const METER = {
    idFromName: (name: string) => env.METER.idFromName(name),
    get: (id: DurableObjectId) => {
      lookups.push(id.toString());
      return env.METER.get(id);
    },
  };
  return { METER, lookups };
}

/** The DB binding, counting the existence checks made before a key's meter is reached. */
function countingExistence() {
  const reads: string[] = [];
  const DB = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          if (sql === SQL.keyExists) reads.push(sql);
          return target.prepare(sql);
        };
      }
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { DB, reads };
}

describe('the negative cache of unknown keys', () => {
  it('costs N random keys one D1 read each and no meter at all, and a repeated one neither, on both APIs', async () => {
    // A meter reached is a Durable Object made, with its SQLite file on disk self-hosted: a guess must not.
    unknownKeys.clear();
    const { METER, lookups } = countingMeter();
    const { DB, reads } = countingExistence();
    const clock = new TestClock();
    const keys = Array.from({ length: 25 }, generateKey);
    for (const key of keys) {
      const res = await call('/api/v1/account', { headers: toolsHeaders(key), env: { METER, DB }, clock });
      expect((await res.json<any>()).error.message).toBe('invalid API key: unknown API key');
    }
    expect(lookups).toHaveLength(0);
    expect(reads).toHaveLength(keys.length);
    // Again, on either API and with either header, within the minute: answered the same, no read.
    for (const key of keys) {
      const tools = await call('/api/v1/account', { headers: bearer(key), env: { METER, DB }, clock });
      expect(tools.status).toBe(401);
      expect(tools.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await tools.json<any>()).error.message).toBe('invalid API key: unknown API key');
      const image = await call('/api/v1/compress', { method: 'POST', headers: bearer(key), env: { METER, DB }, clock });
      expect((await image.json<any>()).error.message).toBe('invalid API key: unknown API key');
    }
    expect(reads).toHaveLength(keys.length);
    // A key first seen on the image API is remembered too.
    const imageFirst = generateKey();
    await call('/api/v1/compress', { method: 'POST', headers: bearer(imageFirst), env: { METER, DB }, clock });
    await call('/api/v1/account', { headers: toolsHeaders(imageFirst), env: { METER, DB }, clock });
    expect(reads).toHaveLength(keys.length + 1);
    // After the TTL D1 is asked again, once; the meter never.
    clock.advance(UNKNOWN_KEY_TTL_MS);
    await call('/api/v1/account', { headers: toolsHeaders(keys[0]!), env: { METER, DB }, clock });
    await call('/api/v1/account', { headers: toolsHeaders(keys[0]!), env: { METER, DB }, clock });
    expect(reads).toHaveLength(keys.length + 2);
    expect(lookups).toHaveLength(0);
  });

  it('never holds a known key: valid keys keep working, revoked ones still say revoked, and each asks the meter', async () => {
    unknownKeys.clear();
    const { METER, lookups } = countingMeter();
    const k = await makeKey();
    for (let i = 0; i < 3; i++)
      expect((await call('/api/v1/account', { headers: toolsHeaders(k.key), env: { METER } })).status).toBe(200);
    const image = await compressCall(k.key, { image: pngOf(photo(8, 8)) }, { env: { METER } });
    expect(image.status).toBe(200);
    await image.arrayBuffer();
    const again = await compressCall(k.key, { image: pngOf(photo(8, 8)) }, { env: { METER } });
    expect(again.headers.get('x-ratelimit-remaining')).toBe('98'); // the first one was committed through the same stub
    await revoke(k);
    for (let i = 0; i < 2; i++) {
      const res = await call('/api/v1/account', { headers: toolsHeaders(k.key), env: { METER } });
      expect((await res.json<any>()).error.message).toBe('invalid API key: this API key has been revoked');
    }
    expect(lookups).toHaveLength(7);
    expect(unknownKeys.size).toBe(0);
  });

  it('lets a key whose hash was remembered as unknown in once the TTL has passed', async () => {
    // Only possible for a key presented before it existed (a guess, or a fixed key seeded later).
    unknownKeys.clear();
    const clock = new TestClock();
    const early = generateKey();
    expect((await call('/api/v1/account', { headers: toolsHeaders(early), clock })).status).toBe(401);
    const k = await makeKey();
    await env.DB.prepare('UPDATE api_keys SET hash = ? WHERE id = ?')
      .bind(await hashKey(early), k.id)
      .run();
    clock.advance(UNKNOWN_KEY_TTL_MS - 1);
    expect((await call('/api/v1/account', { headers: toolsHeaders(early), clock })).status).toBe(401);
    clock.advance(1);
    expect((await call('/api/v1/account', { headers: toolsHeaders(early), clock })).status).toBe(200);
  });

  it('is bounded: 10,000 hashes for 60 s, the oldest dropped first, expired ones swept', () => {
    expect([unknownKeys.max, unknownKeys.ttlMs]).toEqual([UNKNOWN_KEY_CACHE_MAX, UNKNOWN_KEY_TTL_MS]);
    expect([UNKNOWN_KEY_CACHE_MAX, UNKNOWN_KEY_TTL_MS]).toEqual([10_000, 60_000]);
    const cache = new UnknownKeys(100, 1000);
    for (let i = 0; i < 150; i++) cache.add(`h${i}`, 5000 + i);
    expect(cache.size).toBe(100);
    expect(cache.has('h49', 5200)).toBe(false);
    expect(cache.has('h50', 5200)).toBe(true);
    expect(cache.has('h149', 5200)).toBe(true);
    // Re-adding refreshes the age; expiry is exact; a clock that went back expires the entry.
    cache.add('h50', 5300);
    expect(cache.has('h50', 6299)).toBe(true);
    expect(cache.has('h50', 6300)).toBe(false);
    cache.add('x', 7000);
    expect(cache.has('x', 6999)).toBe(false);
    // A new entry sweeps the expired ones ahead of it.
    cache.add('y', 10_000);
    expect(cache.size).toBe(1);
    // A flood at the cap keeps the size at the cap.
    const big = new UnknownKeys();
    for (let i = 0; i < UNKNOWN_KEY_CACHE_MAX + 500; i++) big.add(`k${i}`, 0);
    expect(big.size).toBe(UNKNOWN_KEY_CACHE_MAX);
  });
});
