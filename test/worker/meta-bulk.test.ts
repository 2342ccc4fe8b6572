// POST /api/v1/meta-tags/bulk: tier limits, order, one failure per entry, six at a time, one request.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ToolsTier } from '../../src/accounts/tiers.ts';
import { awayFromMinuteEdge, call, makeKey, toolsHeaders, type TestKey } from './helpers.ts';
import { bulk, ORIGIN } from './meta-helpers.ts';

let enterprise: TestKey;
beforeAll(async () => {
  enterprise = await makeKey({ tools: 'enterprise' });
});

const urls = (n: number, path = '/rich') => Array.from({ length: n }, (_, i) => `${ORIGIN}${path}?i=${i}`);

describe('tier limits', () => {
  it.each([
    ['free', 5],
    ['developer', 25],
    ['enterprise', 100],
  ] as [ToolsTier, number][])('%s keys may send %i URLs, and one more is a 400 with details.max', async (tier, max) => {
    const key = await makeKey({ tools: tier });
    const ok = await bulk(key.key, { urls: urls(max) });
    expect(ok.res.status).toBe(200);
    expect(ok.body.meta).toMatchObject({ total: max, succeeded: max, failed: 0, tier });
    const over = await bulk(key.key, { urls: urls(max + 1) });
    expect(over.res.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'bad_request', param: 'urls', details: { max, given: max + 1 } });
  });
});

describe('results', () => {
  it('keeps the input order, whatever finishes first, and reports each failure in its own entry', async () => {
    const given = [
      `${ORIGIN}/delay/300?slow`,
      `${ORIGIN}/status/404`,
      'ftp://example.com/',
      'not a url',
      `${ORIGIN}/redirect-private`,
      `${ORIGIN}/image.png`,
      `${ORIGIN}/delay/0?fast`,
      `${ORIGIN}/rich`,
    ];
    const { res, body } = await bulk(enterprise.key, { urls: given });
    expect(res.status).toBe(200);
    expect(body.data.map((d: { url: string }) => d.url)).toEqual(given);
    expect(body.data.map((d: { ok: boolean; error?: { code: string } }) => (d.ok ? 'ok' : d.error!.code))).toEqual([
      'ok',
      'fetch_failed',
      'bad_request',
      'bad_request',
      'bad_request',
      'ok',
      'ok',
      'ok',
    ]);
    expect(body.data[0].data.title).toBe('Delayed ?slow');
    expect(body.data[1].error).toMatchObject({ details: { status: 404 } });
    expect(body.data[2].error.message).toContain('http or https');
    expect(body.data[5].data.content_type).toBe('image/png');
    expect(body.data[7].data.title).toBe('Rich page title');
    expect(body.data[7].cache).toBe('miss');
    expect(body.meta).toMatchObject({ total: 8, succeeded: 4, failed: 4, cache_hits: 0, tier: 'enterprise' });
  });

  it('fetches at most 6 pages at once, and a URL named twice once', async () => {
    const group = crypto.randomUUID();
    const given = Array.from({ length: 14 }, (_, i) => `${ORIGIN}/delay/150?group=${group}&i=${i}`);
    given.push(given[0]!);
    const { body } = await bulk(enterprise.key, { urls: given });
    expect(body.meta.succeeded).toBe(15);
    expect(body.data[14]).toEqual({ ...body.data[0] });
    const stats = await (await fetch(`${ORIGIN}/delay-stats?group=${group}`)).json<{
      maxInFlight: number;
      total: number;
    }>();
    expect(stats.total).toBe(14);
    expect(stats.maxInFlight).toBe(6);
  });

  it('answers from the cache what GET /meta-tags cached, and says how many', async () => {
    const url = `${ORIGIN}/rich?bulk-cache=${crypto.randomUUID()}`;
    const env = { META_CACHE_TTL: '300' };
    await bulk(enterprise.key, { urls: [url] }, { env });
    const { body } = await bulk(enterprise.key, { urls: [url, `${ORIGIN}/no-head`] }, { env });
    expect(body.data.map((d: { cache: string }) => d.cache)).toEqual(['hit', 'miss']);
    expect(body.meta.cache_hits).toBe(1);
  });

  it('counts as one request however many URLs it names', async () => {
    const key = await makeKey({ tools: 'free' });
    // Both answers in one minute's window, whose remaining count they compare.
    await awayFromMinuteEdge();
    const first = await bulk(key.key, { urls: urls(5) });
    const second = await bulk(key.key, { urls: urls(5) });
    expect(
      Number(first.res.headers.get('x-ratelimit-remaining')) - Number(second.res.headers.get('x-ratelimit-remaining')),
    ).toBe(1);
  });
});

describe('bad bodies (400 / 413, nothing fetched)', () => {
  it.each([
    ['not JSON', { raw: '{"urls": [' }, 'not valid JSON', undefined],
    [
      'a form',
      { raw: 'urls=x', type: 'application/x-www-form-urlencoded' },
      'Content-Type: application/json',
      undefined,
    ],
    ['no urls', { raw: '{}' }, 'urls is required', 'urls'],
    ['urls not an array', { raw: '{"urls":"https://example.com/"}' }, 'urls', 'urls'],
    ['an empty list', { raw: '{"urls":[]}' }, 'at least one URL', 'urls'],
    ['a number among the URLs', { raw: '{"urls":["https://example.com/", 3]}' }, 'must be a string', 'urls.1'],
    ['an unknown field', { raw: '{"urls":["https://example.com/"],"url":"x"}' }, 'unknown field "url"', undefined],
  ])('refuses %s', async (_name, options, message, param) => {
    const { res, body } = await bulk(enterprise.key, undefined, options);
    expect(res.status).toBe(400);
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toContain(message);
    if (param) expect(body.error.param).toBe(param);
  });

  it('refuses a body over 256 KB with 413', async () => {
    const { res, body } = await bulk(enterprise.key, { urls: [`https://example.com/${'a'.repeat(300_000)}`] });
    expect(res.status).toBe(413);
    expect(body.error).toMatchObject({ code: 'payload_too_large', details: { max_bytes: 262_144 } });
  });

  it('cuts off a body sent without Content-Length as soon as it passes 256 KB', async () => {
    const chunk = new TextEncoder().encode(`"https://example.com/${'a'.repeat(16_000)}",`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"urls":['));
        // Far more than the limit: only a reader that stops early gets an answer.
        if (sent++ > 1_000) return controller.close();
        controller.enqueue(chunk);
      },
    });
    const res = await call('/api/v1/meta-tags/bulk', {
      method: 'POST',
      headers: { ...toolsHeaders(enterprise.key), 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(413);
    expect(sent).toBeLessThan(40);
  });

  it('refuses a body longer or shorter than its Content-Length with 400, not 500', async () => {
    const json = new TextEncoder().encode(JSON.stringify({ urls: [`${ORIGIN}/rich`] }));
    for (const declared of [json.length >> 1, json.length + 50]) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(json);
          controller.close();
        },
      });
      const res = await call('/api/v1/meta-tags/bulk', {
        method: 'POST',
        headers: {
          ...toolsHeaders(enterprise.key),
          'Content-Type': 'application/json',
          'Content-Length': String(declared),
        },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(400);
      const error = (await res.json<any>()).error;
      expect(error.code).toBe('bad_request');
      expect(error.message).toContain('could not be read in full');
    }
  });

  it('takes GET only at /meta-tags and POST only at /meta-tags/bulk', async () => {
    const get = await call('/api/v1/meta-tags/bulk', { headers: toolsHeaders(enterprise.key) });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
