// The manage scope: a manage key runs the management API (keys, webhooks) and nothing else; image and
// tools keys cannot manage. Keys made over the API follow the console's rules: shown once, capped.
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import { MAX_KEYS_CREATED_PER_DAY } from '../../src/keys/limits.ts';
import { MANAGE_PER_MINUTE } from '../../src/metering/rules.ts';
import { TestClock, bearer, call, makeKey, toolsHeaders } from './helpers.ts';
import { compressCall, photo, pngOf } from './image-fixtures.ts';
import { signedUp } from './console-helpers.ts';
import { manage, manageAccount } from './webhook-helpers.ts';

const TINY = pngOf(photo(8, 8));

interface Key {
  id: string;
  key?: string;
  prefix: string;
  scopes: string[];
  revoked_at: string | null;
}

describe('the manage scope', () => {
  it('cannot call the image or tools APIs', async () => {
    const account = await manageAccount();
    for (const res of [
      await call('/api/v1/account', { headers: toolsHeaders(account.key) }),
      await call('/api/v1/categories', { headers: bearer(account.key) }),
      await compressCall(account.key, { image: TINY, filename: 'a.png' }),
    ]) {
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('forbidden');
      expect(body.error.message).toContain('its scopes: manage');
    }
  });

  it('is the only scope that can manage', async () => {
    const both = await makeKey({ scopes: ['image', 'tools'], tools: 'developer' });
    for (const [method, path] of [
      ['GET', '/api/v1/keys'],
      ['POST', '/api/v1/keys'],
      ['GET', '/api/v1/webhooks'],
      ['DELETE', `/api/v1/keys/${both.id}`],
    ] as const) {
      const res = await manage(both.key, path, {
        method,
        ...(method === 'POST' ? { body: { name: 'x', scopes: ['image'] } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.message).toContain('management API');
    }
    // x-api-key works as well as Bearer; no key and no session is a 401.
    const account = await manageAccount();
    expect((await call('/api/v1/keys', { headers: toolsHeaders(account.key) })).status).toBe(200);
    const anonymous = await call('/api/v1/keys');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
  });

  it('is never combined with image or tools', async () => {
    const account = await manageAccount();
    const res = await manage(account.key, '/api/v1/keys', {
      method: 'POST',
      body: { name: 'mixed', scopes: ['image', 'manage'] },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('manage cannot be combined');
  });
});

describe('keys over the management API', () => {
  it('lists, creates (the key shown once) and revokes', async () => {
    const account = await manageAccount();
    const res = await manage(account.key, '/api/v1/keys', {
      method: 'POST',
      body: { name: 'pipeline', scopes: ['tools'] },
    });
    expect(res.status).toBe(201);
    const created = ((await res.json()) as { data: Key }).data;
    expect(created.key).toMatch(/^sr_live_[0-9A-Za-z]{32}$/);
    expect(res.headers.get('location')).toBe(`/api/v1/keys/${created.id}`);
    // The new key works on the tools API.
    expect((await call('/api/v1/categories', { headers: toolsHeaders(created.key!) })).status).toBe(200);
    const list = (await (await manage(account.key, '/api/v1/keys')).json()) as { data: Key[] };
    expect(list.data.map((k) => k.id).sort()).toEqual([account.id, created.id].sort());
    expect(JSON.stringify(list)).not.toContain(created.key);
    const revoked = await manage(account.key, `/api/v1/keys/${created.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as { data: Key }).data.revoked_at).not.toBeNull();
    expect((await call('/api/v1/categories', { headers: toolsHeaders(created.key!) })).status).toBe(401);
    expect((await manage(account.key, '/api/v1/keys/key_nope', { method: 'DELETE' })).status).toBe(404);
  });

  it('can make a manage key, which can then manage', async () => {
    const account = await manageAccount();
    const res = await manage(account.key, '/api/v1/keys', {
      method: 'POST',
      body: { name: 'second', scopes: ['manage'] },
    });
    const created = ((await res.json()) as { data: Key }).data;
    expect(created.scopes).toEqual(['manage']);
    expect((await manage(created.key!, '/api/v1/keys')).status).toBe(200);
  });

  it(`shares the console's cap of ${MAX_KEYS_CREATED_PER_DAY} keys a day`, async () => {
    const account = await manageAccount();
    let last: Response | undefined;
    for (let i = 0; i < MAX_KEYS_CREATED_PER_DAY; i++) {
      last = await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name: `k${i}`, scopes: ['image'] } });
      if (last.status === 201) {
        const id = ((await last.json()) as { data: Key }).data.id;
        await manage(account.key, `/api/v1/keys/${id}`, { method: 'DELETE' });
      }
    }
    // The manage key, made today too, counts: the day's creations are used up by now.
    const over = await manage(account.key, '/api/v1/keys', {
      method: 'POST',
      body: { name: 'one more', scopes: ['image'] },
    });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('the console session still works, and needs its CSRF token to change anything', async () => {
    const { browser, csrf } = await signedUp();
    expect((await browser.json('/api/v1/keys')).status).toBe(200);
    expect(
      (await browser.json('/api/v1/keys', { method: 'POST', body: { name: 'x', scopes: ['image'] } })).status,
    ).toBe(403);
    const made = await browser.json('/api/v1/keys', { method: 'POST', body: { name: 'x', scopes: ['manage'] }, csrf });
    expect(made.status).toBe(201);
  });
});

describe('management rate limit', () => {
  it(`allows a manage key ${MANAGE_PER_MINUTE} requests a UTC minute, then 429 with Retry-After until the next`, async () => {
    const account = await manageAccount();
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 45));
    const meter = env.METER.get(env.METER.idFromName(await hashKey(account.key)));
    const ask = () => call('/api/v1/webhooks', { headers: { Authorization: `Bearer ${account.key}` }, clock });
    expect((await ask()).status).toBe(200); // the meter's first use makes its tables
    await runInDurableObject(meter, (_i, state) => {
      state.storage.sql.exec('UPDATE windows SET used = ? WHERE name = ?', MANAGE_PER_MINUTE - 1, 'manage_minute');
    });
    expect((await ask()).status).toBe(200);
    const refused = await ask();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('15');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    clock.advance(15_000);
    expect((await ask()).status).toBe(200);
  });
});
