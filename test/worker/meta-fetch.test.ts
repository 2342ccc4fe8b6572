// GET /api/v1/meta-tags: the URL rules, redirects, upstream failures, timeouts, caching and metering.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, makeKey, TestClock, toolsHeaders, type TestKey } from './helpers.ts';
import { metaTags, ORIGIN } from './meta-helpers.ts';

let k: TestKey;
beforeAll(async () => {
  k = await makeKey({ tools: 'enterprise' });
});

const fixturePort = new URL(ORIGIN).port;

describe('URLs the rules refuse (400, nothing fetched)', () => {
  it.each([
    // Scheme, credentials, port
    ['ftp://example.com/', 'http or https'],
    ['file:///etc/passwd', 'http or https'],
    ['javascript:alert(1)', 'http or https'],
    ['data:text/html,<title>x</title>', 'http or https'],
    ['https://user:pass@example.com/', 'user name or password'],
    ['https://user@example.com/', 'user name or password'],
    ['http://example.com:8080/', 'port 80 or 443'],
    ['https://example.com:22/', 'port 80 or 443'],
    // Loopback in every notation
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0x7f.0.0.1/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://127.0.0.1./', 'loopback'],
    ['http://%31%32%37.0.0.1/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'mapped'],
    ['http://[::ffff:7f00:1]/', 'mapped'],
    ['http://[64:ff9b::127.0.0.1]/', 'NAT64'],
    ['http://[::127.0.0.1]/', 'compatible'],
    ['http://localhost/', 'local name'],
    ['http://LOCALHOST./', 'local name'],
    ['http://api.localhost/', 'local name'],
    // The fixture origin is let through (FETCH_TEST_ORIGIN); its neighbours and other spellings are not.
    [`http://127.0.0.1:${Number(fixturePort) + 1}/rich`, 'port 80 or 443'],
    [`http://localhost:${fixturePort}/rich`, 'port 80 or 443'],
    [`https://127.0.0.1:${fixturePort}/rich`, 'port 80 or 443'],
    // Private, link-local, CGNAT, multicast, reserved, this network
    ['http://10.0.0.1/', 'private'],
    ['http://10.1/', 'private'],
    ['http://172.16.5.4/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://0xc0a80101/', 'private'],
    ['http://3232235777/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[fd00::1]/', 'unique local'],
    ['http://100.64.0.1/', 'CGNAT'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://240.0.0.1/', 'reserved'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://0.0.0.0/', 'this network'],
    ['http://[::]/', 'unspecified'],
    // Names that are addresses in disguise, and local names
    ['http://127.0.0.1.nip.io/', 'loopback'],
    ['http://10-0-0-1.sslip.io/', 'private'],
    ['http://7f000001.nip.io/', 'loopback'],
    ['http://localtest.me/', 'loopback'],
    ['http://metadata.google.internal/', 'local name'],
    ['http://printer.local/', 'local name'],
    ['http://intranet/', 'local name'],
  ])('%s (%s)', async (url, reason) => {
    const { res, body } = await metaTags(k.key, url);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.error.code).toBe('bad_request');
    expect(body.error.param).toBe('url');
    expect(body.error.message.toLowerCase()).toContain(reason.toLowerCase());
  });

  it.each([
    ['', 'must not be empty'],
    ['example.com', 'absolute URL'],
    ['https://example.com/' + 'a'.repeat(2100), 'at most 2048'],
  ])('refuses the malformed URL "%s"', async (url, message) => {
    const { res, body } = await metaTags(k.key, url);
    expect(res.status).toBe(400);
    expect(body.error.message).toContain(message);
  });

  it('requires the url parameter and refuses unknown ones', async () => {
    const missing = await call('/api/v1/meta-tags', { headers: toolsHeaders(k.key) });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { code: 'bad_request', param: 'url' } });
    const extra = await call('/api/v1/meta-tags?url=https://example.com/&urll=x', { headers: toolsHeaders(k.key) });
    expect(await extra.json()).toMatchObject({ error: { param: 'urll' } });
  });

  it('lets through only the exact loopback origin of FETCH_TEST_ORIGIN, and only a loopback one', async () => {
    expect((await metaTags(k.key, '/rich')).res.status).toBe(200);
    // Unset (as deployed): the fixture origin is refused like any loopback address.
    expect((await metaTags(k.key, '/rich', { env: { FETCH_TEST_ORIGIN: '' } })).res.status).toBe(400);
    // A private origin in the var is ignored rather than trusted.
    const priv = await metaTags(k.key, 'http://10.0.0.1/', { env: { FETCH_TEST_ORIGIN: 'http://10.0.0.1' } });
    expect(priv.body.error.message).toContain('private');
  });

  it('applies every rule about the URL itself to the FETCH_TEST_ORIGIN origin; only its address and port are waived', async () => {
    const origin = new URL(ORIGIN);
    // A user name or password, given or reached by a redirect back to the same origin.
    for (const creds of ['user:secret@', 'user@', ':secret@']) {
      const { res, body } = await metaTags(k.key, `${origin.protocol}//${creds}${origin.host}/rich`);
      expect(res.status, creds).toBe(400);
      expect(body.error.message, creds).toBe('url must not contain a user name or password');
    }
    const redirected = await metaTags(k.key, '/redirect-credentials');
    expect(redirected.res.status).toBe(400);
    expect(redirected.body.error.message).toMatch(/which must not contain a user name or password$/);
    // Too long is too long, even there.
    const long = await metaTags(k.key, `/rich?${'a'.repeat(2100)}`);
    expect(long.res.status).toBe(400);
    expect(long.body.error.message).toContain('at most 2048 characters');
    // The same loopback host on another port is not the test origin.
    const other = await metaTags(
      k.key,
      `${origin.protocol}//${origin.hostname}:${Number(origin.port) === 65535 ? 1 : Number(origin.port) + 1}/rich`,
    );
    expect(other.res.status).toBe(400);
    // A var that carries credentials, or is not http(s), opens nothing.
    for (const value of [`http://user:secret@${origin.host}`, `ftp://${origin.host}`]) {
      expect((await metaTags(k.key, '/rich', { env: { FETCH_TEST_ORIGIN: value } })).res.status, value).toBe(400);
    }
    expect((await metaTags(k.key, '/rich')).res.status).toBe(200);
  });
});

describe('redirects', () => {
  it('follows 5 redirects', async () => {
    const { res, body } = await metaTags(k.key, '/redirect/5');
    expect(res.status).toBe(200);
    expect(body.data).toMatchObject({ final_url: `${ORIGIN}/redirect/0`, title: 'Arrived' });
  });

  it('refuses the 6th with 502 fetch_failed', async () => {
    const { res, body } = await metaTags(k.key, '/redirect/6');
    expect(res.status).toBe(502);
    expect(body.error).toMatchObject({ code: 'fetch_failed', details: { reason: 'too_many_redirects', redirects: 6 } });
  });

  it.each([
    ['/redirect-private', 'http://10.0.0.1/admin', 'private'],
    ['/redirect-metadata', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'mapped'],
    ['/redirect-ftp', 'ftp://example.com/', 'http or https'],
  ])('refuses %s, which redirects to a URL the rules forbid, with 400', async (path, location, reason) => {
    const { res, body } = await metaTags(k.key, path);
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'bad_request', param: 'url', details: { redirect: 1, location } });
    expect(body.error.message).toContain(reason);
  });
});

describe('upstream failures (502 fetch_failed)', () => {
  it.each([404, 500])('passes on an upstream %i as details.status', async (status) => {
    const { res, body } = await metaTags(k.key, `/status/${status}`);
    expect(res.status).toBe(502);
    expect(body.error).toMatchObject({ code: 'fetch_failed', details: { status, reason: 'status' } });
    expect(body.error.message).toContain(String(status));
  });

  it('fails a name that does not resolve', async () => {
    const { res, body } = await metaTags(k.key, 'http://no-such-host.invalid/');
    expect(res.status).toBe(502);
    expect(body.error).toMatchObject({ code: 'fetch_failed', details: { reason: 'network' } });
    expect(body.error.details.status).toBeUndefined();
  });

  it('fails a refused connection and a TLS handshake with a server that speaks plain HTTP', async () => {
    const closed = 'http://127.0.0.1:9';
    const refused = await metaTags(k.key, `${closed}/`, { env: { FETCH_TEST_ORIGIN: closed } });
    expect(refused.res.status).toBe(502);
    expect(refused.body.error.details.reason).toBe('network');
    const tlsOrigin = ORIGIN.replace('http:', 'https:');
    const tls = await metaTags(k.key, `${tlsOrigin}/rich`, { env: { FETCH_TEST_ORIGIN: tlsOrigin } });
    expect(tls.res.status).toBe(502);
    expect(tls.body.error.details.reason).toBe('network');
  });

  it('gives up after 8 s on an origin that never answers and on a body that stalls', { timeout: 30_000 }, async () => {
    const started = Date.now();
    const [slow, stall] = await Promise.all([metaTags(k.key, '/slow'), metaTags(k.key, '/stall')]);
    const elapsed = Date.now() - started;
    for (const { res, body } of [slow, stall]) {
      expect(res.status).toBe(502);
      expect(body.error).toMatchObject({ code: 'fetch_failed', details: { reason: 'timeout' } });
    }
    expect(elapsed).toBeGreaterThanOrEqual(7_900);
    expect(elapsed).toBeLessThan(15_000);
  });
});

describe('caching', () => {
  it('keeps a successful extraction for META_CACHE_TTL seconds: miss, then hit with the same data', async () => {
    const path = `/rich?cache=${crypto.randomUUID()}`;
    const env = { META_CACHE_TTL: '300' };
    const first = await metaTags(k.key, path, { env });
    const second = await metaTags(k.key, `${path}#fragment-ignored`, { env });
    expect(first.body.meta.cache).toBe('miss');
    expect(second.body.meta.cache).toBe('hit');
    expect(second.body.data).toEqual(first.body.data);
  });

  it('does not cache failures, nor anything when META_CACHE_TTL is 0', async () => {
    const env = { META_CACHE_TTL: '300' };
    const failing = `/status/404?cache=${crypto.randomUUID()}`;
    await metaTags(k.key, failing, { env });
    expect((await metaTags(k.key, failing, { env })).res.status).toBe(502);
    const off = `/rich?cache=${crypto.randomUUID()}`;
    await metaTags(k.key, off);
    expect((await metaTags(k.key, off)).body.meta.cache).toBe('miss');
  });

  it('never answers a refused URL from the cache', async () => {
    const path = `/rich?cache=${crypto.randomUUID()}`;
    await metaTags(k.key, path, { env: { META_CACHE_TTL: '300' } });
    const { res } = await metaTags(k.key, path, { env: { META_CACHE_TTL: '300', FETCH_TEST_ORIGIN: '' } });
    expect(res.status).toBe(400);
  });
});

describe('metering', () => {
  it('counts every call, failures included', async () => {
    const free = await makeKey({ tools: 'free' });
    const clock = new TestClock();
    const remaining: string[] = [];
    for (const path of ['/rich', '/status/404', 'ftp://x/']) {
      const url = path.startsWith('/') ? ORIGIN + path : path;
      const res = await call(`/api/v1/meta-tags?url=${encodeURIComponent(url)}`, {
        headers: toolsHeaders(free.key),
        clock,
        env: { FETCH_TEST_ORIGIN: ORIGIN, META_CACHE_TTL: '0' },
      });
      remaining.push(res.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['99', '98', '97']);
  });
});
