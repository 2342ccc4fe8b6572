// Key management for signed-in sessions: the JSON API (GET/POST/DELETE /api/v1/keys) and the keys page.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/accounts/keys.ts';
import { MAX_ACTIVE_KEYS } from '../../src/keys/limits.ts';
import { call, makeKey, toolsHeaders } from './helpers.ts';
import { type Browser, signedUp } from './console-helpers.ts';

interface KeyJson {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  key?: string;
}

async function create(browser: Browser, csrf: string, body: unknown = { name: 'CI', scopes: ['tools'] }) {
  const res = await browser.json('/api/v1/keys', { method: 'POST', csrf, body });
  return {
    res,
    body: (await res.json()) as { data: KeyJson; error?: { code: string; message: string; param?: string } },
  };
}

describe('the keys JSON API', () => {
  it('needs a signed-in session (or a manage key): no cookie or a junk cookie get 401, an image/tools key 403', async () => {
    const { key } = await makeKey();
    for (const headers of [{}, { cookie: '__Host-sr_session=' + 'a'.repeat(43) }] as Record<string, string>[]) {
      const res = await call('/api/v1/keys', { headers });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.message).toContain('sign in to the web console');
    }
    // Management takes the manage scope (test/worker/manage-keys.test.ts); other keys are refused.
    for (const headers of [toolsHeaders(key), { authorization: `Bearer ${key}` }]) {
      const res = await call('/api/v1/keys', { headers });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    }
  });

  it('creates a key that works at once, shows it once, lists it without the secret, and revokes it everywhere', async () => {
    const { browser, csrf } = await signedUp();
    const { res, body } = await create(browser, csrf, { name: '  Build server ', scopes: ['tools', 'image', 'tools'] });
    expect(res.status).toBe(201);
    const created = body.data;
    expect(created).toMatchObject({
      name: 'Build server',
      scopes: ['image', 'tools'],
      last_used_at: null,
      revoked_at: null,
    });
    expect(created.key).toMatch(/^sr_live_[0-9A-Za-z]{32}$/);
    expect(created.prefix).toBe(created.key!.slice(0, 12));
    expect(res.headers.get('location')).toBe(`/api/v1/keys/${created.id}`);
    const stored = await env.DB.prepare('SELECT hash FROM api_keys WHERE id = ?')
      .bind(created.id)
      .first<{ hash: string }>();
    expect(stored!.hash).toBe(await sha256Hex(created.key!));

    expect((await call('/api/v1/tools?limit=1', { headers: toolsHeaders(created.key!) })).status).toBe(200);

    const list = (await (await browser.json('/api/v1/keys')).json()) as { data: KeyJson[]; meta: { total: number } };
    expect(list.meta.total).toBe(1);
    expect(list.data[0]).toMatchObject({ id: created.id, name: 'Build server', prefix: created.prefix });
    expect(JSON.stringify(list)).not.toContain(created.key!);

    const revoked = await browser.json(`/api/v1/keys/${created.id}`, { method: 'DELETE', csrf });
    expect(revoked.status).toBe(200);
    const revokedBody = (await revoked.json()) as { data: KeyJson };
    expect(revokedBody.data.revoked_at).not.toBeNull();
    // The Durable Object cached the key as good a moment ago; the very next request is refused.
    const refused = await call('/api/v1/tools?limit=1', { headers: toolsHeaders(created.key!) });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('revoked');

    const again = await browser.json(`/api/v1/keys/${created.id}`, { method: 'DELETE', csrf });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { data: KeyJson }).data.revoked_at).toBe(revokedBody.data.revoked_at);
  });

  it('needs the X-CSRF-Token header from this session, and the own origin, to create or revoke', async () => {
    const { browser, csrf } = await signedUp();
    const other = await signedUp();
    const target = (await create(browser, csrf)).body.data;
    const attempts: { csrf?: string; headers?: Record<string, string> }[] = [
      { csrf: undefined },
      { csrf: 'z'.repeat(43) },
      { csrf: other.csrf },
      { csrf, headers: { origin: 'https://evil.example' } },
      { csrf, headers: { 'sec-fetch-site': 'same-site' } },
    ];
    for (const attempt of attempts) {
      const post = await browser.json('/api/v1/keys', {
        method: 'POST',
        body: { name: 'x', scopes: ['image'] },
        ...attempt,
      });
      expect(post.status).toBe(403);
      expect(((await post.json()) as { error: { code: string; message: string } }).error.message).toContain(
        'X-CSRF-Token',
      );
      expect((await browser.json(`/api/v1/keys/${target.id}`, { method: 'DELETE', ...attempt })).status).toBe(403);
    }
    const list = (await (await browser.json('/api/v1/keys')).json()) as { data: KeyJson[] };
    expect(list.data.map((k) => [k.name, k.revoked_at])).toEqual([['CI', null]]);
  });

  it("keeps accounts apart: another account's key id is 404, and revoking it changes nothing", async () => {
    const alice = await signedUp();
    const bob = await signedUp();
    const bobs = (await create(bob.browser, bob.csrf)).body.data;
    const res = await alice.browser.json(`/api/v1/keys/${bobs.id}`, { method: 'DELETE', csrf: alice.csrf });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect(
      (await alice.browser.json('/api/v1/keys/key_doesnotexist000', { method: 'DELETE', csrf: alice.csrf })).status,
    ).toBe(404);
    const bobList = (await (await bob.browser.json('/api/v1/keys')).json()) as { data: KeyJson[] };
    expect(bobList.data[0]!.revoked_at).toBeNull();
    const aliceList = (await (await alice.browser.json('/api/v1/keys')).json()) as { data: KeyJson[] };
    expect(aliceList.data).toEqual([]);
  });

  it('explains bad bodies with 400 naming the field, and refuses bodies over 16 KB with 413', async () => {
    const { browser, csrf } = await signedUp();
    const cases: [unknown, string, string][] = [
      [{ scopes: ['image'] }, 'name', 'name'],
      [{ name: '   ', scopes: ['image'] }, 'name', 'must not be empty'],
      [{ name: 'x'.repeat(65), scopes: ['image'] }, 'name', 'at most 64'],
      [{ name: 'tab\there', scopes: ['image'] }, 'name', 'control characters'],
      [{ name: 'x', scopes: [] }, 'scopes', 'at least one'],
      [{ name: 'x', scopes: ['admin'] }, 'scopes.0', 'image or tools'],
      [{ name: 'x', scopes: 'image' }, 'scopes', 'array'],
      [{ name: 'x', scopes: ['image'], tier: 'pro' }, 'tier', 'unknown field "tier"'],
    ];
    for (const [body, param, message] of cases) {
      const { res, body: out } = await create(browser, csrf, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(out.error!.param, JSON.stringify(body)).toBe(param);
      expect(out.error!.message, JSON.stringify(body)).toContain(message);
    }
    const notJson = await browser.fetch('/api/v1/keys', {
      method: 'POST',
      headers: { 'x-csrf-token': csrf, 'content-type': 'text/plain' },
      body: 'name=x',
    });
    expect(notJson.status).toBe(400);
    const big = await browser.json('/api/v1/keys', {
      method: 'POST',
      csrf,
      body: { name: 'x', scopes: ['image'], pad: 'p'.repeat(17_000) },
    });
    expect(big.status).toBe(413);
  });

  it(`holds at most ${MAX_ACTIVE_KEYS} active keys; revoking one makes room`, async () => {
    const { browser, csrf } = await signedUp();
    const made = await Promise.all(
      Array.from({ length: MAX_ACTIVE_KEYS + 3 }, (_, i) =>
        create(browser, csrf, { name: `k${i}`, scopes: ['image'] }),
      ),
    );
    expect(made.filter((m) => m.res.status === 201)).toHaveLength(MAX_ACTIVE_KEYS);
    const refused = made.find((m) => m.res.status === 400)!;
    expect(refused.body.error!.message).toBe(
      `an account may hold at most ${MAX_ACTIVE_KEYS} active keys; revoke one first`,
    );
    const first = made.find((m) => m.res.status === 201)!.body.data;
    await browser.json(`/api/v1/keys/${first.id}`, { method: 'DELETE', csrf });
    expect((await create(browser, csrf)).res.status).toBe(201);
  });
});

describe('the keys page', () => {
  it('creates a key with the form, shows it once with a warning, and never again', async () => {
    const { browser, csrf } = await signedUp();
    const res = await browser.post('/keys', { _csrf: csrf, name: 'Image worker <prod>', scopes: ['image'] });
    expect(res.status).toBe(200);
    const html = await res.text();
    const key = /data-testid="new-key" type="text" readonly value="(sr_live_[0-9A-Za-z]{32})"/.exec(html)?.[1];
    expect(key).toBeDefined();
    expect(html).toContain('This is the only time the key is shown');
    expect(html).toContain('data-copy="new-key"');
    expect(html).toContain('Image worker &lt;prod&gt;');
    expect(html).not.toContain('Image worker <prod>');
    const later = await browser.page('/keys');
    expect(later.html).not.toContain(key!);
    expect(later.html).toContain(key!.slice(0, 12));
    expect(later.html).toMatch(/<span class="status-active">Active<\/span>/);
  });

  it('explains a missing name or scope and keeps the form filled', async () => {
    const { browser, csrf } = await signedUp();
    const noScope = await browser.post('/keys', { _csrf: csrf, name: 'Nothing' });
    expect(noScope.status).toBe(400);
    const html = await noScope.text();
    expect(html).toContain('Choose at least one API the key may call.');
    expect(html).toContain('value="Nothing"');
    const noName = await browser.post('/keys', { _csrf: csrf, name: '', scopes: 'tools' });
    expect(await noName.text()).toContain('The key name must not be empty.');
  });

  it('revokes after a confirmation page, and the key is refused at once', async () => {
    const { browser, csrf } = await signedUp();
    const created = (await create(browser, csrf, { name: 'Short-lived', scopes: ['tools'] })).body.data;
    const confirm = await browser.page(`/keys/${created.id}/revoke`);
    expect(confirm.html).toContain('<h1>Revoke the key "Short-lived"?</h1>');
    expect(confirm.html).toContain('Revoke key</button>');
    const res = await browser.post(`/keys/${created.id}/revoke`, { _csrf: confirm.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/keys?revoked=${created.id}`);
    expect(res.headers.get('permissions-policy')).toContain('camera=()');
    const after = await browser.page(`/keys?revoked=${created.id}`);
    expect(after.html).toContain('The key &quot;Short-lived&quot; is revoked');
    expect((await browser.page('/keys?revoked=Anything%20you%20like')).html).not.toContain('is revoked');
    expect(after.html).toMatch(new RegExp(`data-key-id="${created.id}"[\\s\\S]*?status-revoked`));
    expect((await call('/api/v1/tools', { headers: toolsHeaders(created.key!) })).status).toBe(401);
    expect((await browser.fetch(`/keys/${created.id}/revoke`)).status).toBe(404);
  });
});
