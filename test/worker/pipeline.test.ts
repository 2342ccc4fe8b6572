import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { errorResponse } from '../../src/http/errors.ts';
import { TestClock, adminRefresh, call, captureConsole, makeKey, toolsHeaders } from './helpers.ts';

describe('request ids', () => {
  it('echoes a sane caller id on success and error alike', async () => {
    const k = await makeKey();
    const ok = await call('/api/v1/health', {
      headers: { ...toolsHeaders(k.key), 'X-Request-Id': 'ci-build-42:step.7' },
    });
    expect(ok.headers.get('x-request-id')).toBe('ci-build-42:step.7');
    const err = await call('/api/v1/health', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(err.headers.get('x-request-id')).toBe('abc-123');
    expect((await err.json<any>()).meta.request_id).toBe('abc-123');
  });

  it('replaces an insane one with its own', async () => {
    for (const bad of ['', 'has space', 'x'.repeat(129), '<script>']) {
      const res = await call('/api/v1/nope', { headers: { 'X-Request-Id': bad } });
      expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    }
  });
});

describe('fallbacks', () => {
  it('404 not_found for unknown paths, with the envelope', async () => {
    const res = await call('/api/v1/does-not-exist');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await res.json<any>();
    expect(body.error).toMatchObject({ code: 'not_found' });
    expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('405 with Allow for a known path and the wrong method', async () => {
    const res = await call('/api/v1/account', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect((await res.json<any>()).error.code).toBe('method_not_allowed');
    const compress = await call('/api/v1/compress', { method: 'GET' });
    expect(compress.status).toBe(405);
    expect(compress.headers.get('allow')).toBe('POST');
  });

  it('HEAD works where GET does', async () => {
    const k = await makeKey();
    const res = await call('/api/v1/health', { method: 'HEAD', headers: toolsHeaders(k.key) });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('an unexpected error is a 500 envelope with no stack or message leak', async () => {
    // The error goes to the operator's log, under the request id, and nowhere else.
    const { result: res, lines } = await captureConsole('error', async () =>
      errorResponse(new Error('database password is hunter2 at line 3'), 'req_x'),
    );
    expect(lines).toEqual([expect.stringContaining('internal_error request_id=req_x')]);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe('internal_error');
    expect(text).not.toContain('hunter2');
    expect(text).not.toMatch(/at line|\.ts:/);
  });

  it('a failing dependency surfaces as 500 internal_error, not a crash', async () => {
    const k = await makeKey();
    const broken = {
      idFromName: () => {
        throw new Error('boom');
      },
    };
    const { result: res, lines } = await captureConsole('error', () =>
      call('/api/v1/account', { headers: toolsHeaders(k.key), env: { METER: broken } }),
    );
    expect(res.status).toBe(500);
    expect(lines).toEqual([expect.stringMatching(/^internal_error request_id=req_\S+ Error: boom/)]);
    expect((await res.json<any>()).error.code).toBe('internal_error');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('host routing', () => {
  const hosts = { IMAGE_API_HOST: 'img.shrinkray.test', TOOLS_API_HOST: 'api.shrinkray.test' };
  const fetchAt = (url: string, init: RequestInit = {}) => call(url, { ...init, env: hosts });

  it('serves each API only on its own host when the vars are set', async () => {
    const k = await makeKey();
    expect((await fetchAt('https://api.shrinkray.test/api/v1/health', { headers: toolsHeaders(k.key) })).status).toBe(
      200,
    );
    const wrongHost = await fetchAt('https://img.shrinkray.test/api/v1/health', { headers: toolsHeaders(k.key) });
    expect(wrongHost.status).toBe(404);
    expect((await wrongHost.json<any>()).error.code).toBe('not_found');
    expect((await fetchAt('https://api.shrinkray.test/api/v1/compress', { method: 'POST' })).status).toBe(404);
    expect((await fetchAt('https://IMG.shrinkray.test:443/api/v1/compress', { method: 'POST' })).status).toBe(401);
  });

  it('serves both everywhere when unset', async () => {
    const k = await makeKey();
    expect((await call('/api/v1/health', { headers: toolsHeaders(k.key) })).status).toBe(200);
    expect((await call('/api/v1/compress', { method: 'POST' })).status).toBe(401);
  });
});

describe('GET /api/v1/health', () => {
  it('has the documented shape', async () => {
    const k = await makeKey({ tools: 'developer' });
    const clock = new TestClock(Date.UTC(2026, 10, 21, 10, 0, 0));
    const res = await call('/api/v1/health', { headers: toolsHeaders(k.key), clock });
    expect(await res.json()).toEqual({
      data: { status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/), time: '2026-11-21T10:00:00.000Z' },
      meta: { tier: 'developer', request_id: res.headers.get('x-request-id') },
    });
  });
});

describe('GET /api/v1/account', () => {
  it('shows account, key, tiers, live usage of every window and the endpoint list', async () => {
    const k = await makeKey({ tools: 'free', image: 'pro', scopes: ['image', 'tools'], name: 'ci' });
    const clock = new TestClock(Date.UTC(2026, 10, 21, 10, 0, 30));
    await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
    const res = await call('/api/v1/account', { headers: toolsHeaders(k.key), clock });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await res.json<any>();
    expect(body.meta).toEqual({ tier: 'free', request_id: res.headers.get('x-request-id') });
    expect(body.data.account).toEqual({
      id: k.accountId,
      name: expect.any(String),
      email: expect.stringContaining('@example.com'),
    });
    expect(body.data.key).toEqual({
      id: k.id,
      name: 'ci',
      prefix: k.key.slice(0, 12),
      scopes: ['image', 'tools'],
      created_at: expect.stringMatching(/Z$/),
      last_used_at: '2026-11-21T10:00:30.000Z',
    });
    expect(JSON.stringify(body)).not.toContain(k.key);
    expect(body.data.tiers).toEqual({ image: 'pro', tools: 'free' });
    expect(body.data.usage).toEqual({
      minute: { limit: 100, used: 2, remaining: 98, reset: Date.UTC(2026, 10, 21, 10, 1) / 1000 },
      day: { limit: 1000, used: 2, remaining: 998, reset: Date.UTC(2026, 10, 22) / 1000 },
      month_compressions: { limit: 10000, used: 0, remaining: 10000, reset: Date.UTC(2026, 11, 1) / 1000 },
    });
    const paths = body.data.endpoints.map((e: any) => `${e.method} ${e.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'GET /api/v1/health',
        'GET /api/v1/account',
        'POST /api/v1/compress',
        'GET /api/v1/openapi.json',
      ]),
    );
    expect(paths.some((p: string) => p.includes('internal'))).toBe(false);
    // The console's session endpoints cannot be called with a key, so a key's endpoint list leaves them out;
    // keys and webhooks can (with a manage key), so they are listed.
    expect(paths.filter((p: string) => /usage|console/.test(p))).toEqual([]);
    expect(paths).toEqual(
      expect.arrayContaining(['POST /api/v1/keys', 'DELETE /api/v1/keys/:id', 'POST /api/v1/webhooks']),
    );
    for (const e of body.data.endpoints) expect(e.description.length).toBeGreaterThan(5);
  });
});

describe('operator endpoint', () => {
  it('requires the admin token, compared exactly', async () => {
    const send = (auth?: string) =>
      call('/internal/keys/refresh', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: auth } : {}) },
        body: '{}',
      });
    expect((await send()).status).toBe(401);
    expect((await send(`Bearer ${env.ADMIN_TOKEN}x`)).status).toBe(401);
    expect((await send(`Bearer ${env.ADMIN_TOKEN.slice(0, -1)}`)).status).toBe(401);
    expect((await send(`Bearer ${env.ADMIN_TOKEN}`)).status).toBe(200);
  });

  it('is refused, whatever the request carries, while ADMIN_TOKEN is shorter than 32 characters, saying how to make one', async () => {
    const short = 'a-31-character-operator-token!!';
    expect(short).toHaveLength(31);
    const res = await call('/internal/keys/refresh', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${short}` },
      body: '{}',
      env: { ADMIN_TOKEN: short },
    });
    expect(res.status).toBe(403);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain('shorter than 32 characters');
    expect(error.message).toContain('openssl rand -base64 32');
    expect(env.ADMIN_TOKEN.length).toBeGreaterThanOrEqual(32);
  });

  it('does not exist without ADMIN_TOKEN', async () => {
    const res = await call('/internal/keys/refresh', {
      method: 'POST',
      headers: { Authorization: 'Bearer ' },
      body: '{}',
      env: { ADMIN_TOKEN: '' },
    });
    expect(res.status).toBe(404);
  });

  it('validates its body with the 400 envelope naming the field', async () => {
    const res = await call('/internal/keys/refresh', {
      method: 'POST',
      headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ key_ids: ['not-an-id'] }),
    });
    expect(res.status).toBe(400);
    const body = await res.json<any>();
    expect(body.error.code).toBe('bad_request');
    expect(body.error.param).toBe('key_ids.0');
  });

  it('reports how many keys it refreshed', async () => {
    const k = await makeKey();
    const res = await adminRefresh({ account_id: k.accountId });
    expect((await res.json<any>()).data.refreshed).toBe(1);
  });
});
