// The events: key.created and key.revoked (written in the key's D1 batch), usage.threshold and
// rate_limit.exceeded (written in the meter's own transaction), each delivered once, verified with the
// standardwebhooks package, and each threshold exactly once however many requests race past it.
import {
  abortAllDurableObjects,
  createExecutionContext,
  createScheduledController,
  env,
  runInDurableObject,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/accounts/keys.ts';
import { TOOLS_TIERS } from '../../src/accounts/tiers.ts';
import { Counters } from '../../src/metering/counters.ts';
import { dayWindow, minuteWindow, monthWindow } from '../../src/metering/windows.ts';
import { MeterOutbox } from '../../src/webhooks/meter-outbox.ts';
import worker from '../../src/index.ts';
import { TestClock, call, toolsHeaders } from './helpers.ts';
import { compressCall, photo, pngOf } from './image-fixtures.ts';
import {
  addEndpoint,
  addKey,
  manage,
  manageAccount,
  messages,
  received,
  verified,
  waitFor,
  type Endpoint,
} from './webhook-helpers.ts';

const TINY = pngOf(photo(8, 8));
// Memory for every request at once, so each one reaches the meter.
const ROOMY = { MEMORY_BUDGET_MB: '1000' };
const settle = () => new Promise((r) => setTimeout(r, 600));

async function payloads(endpoint: Endpoint, count: number) {
  const got = await waitFor(
    async () => messages(await received(endpoint.path)),
    (r) => r.length >= count,
  );
  return got.map((r) => ({ id: r.headers['webhook-id'], ...verified(endpoint, r) }));
}

describe('key events', () => {
  it('key.created and key.revoked reach the endpoints that listen for them, once each', async () => {
    const account = await manageAccount();
    const keys = await addEndpoint(account.key, ['key.created', 'key.revoked']);
    const other = await addEndpoint(account.key, ['usage.threshold']);
    const res = await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name: 'CI', scopes: ['tools'] } });
    expect(res.status).toBe(201);
    const created = ((await res.json()) as { data: { id: string; prefix: string } }).data;
    const [first] = await payloads(keys, 1);
    expect(first).toMatchObject({
      type: 'key.created',
      data: { key_id: created.id, name: 'CI', prefix: created.prefix, scopes: ['tools'] },
    });
    expect(Object.keys(first!.data)).not.toContain('key');
    // Revoked twice: one event.
    expect((await manage(account.key, `/api/v1/keys/${created.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await manage(account.key, `/api/v1/keys/${created.id}`, { method: 'DELETE' })).status).toBe(200);
    const both = await payloads(keys, 2);
    await settle();
    expect(messages(await received(keys.path)).length).toBe(2);
    expect(both[1]).toMatchObject({ type: 'key.revoked', data: { key_id: created.id } });
    expect(typeof both[1]!.data.revoked_at).toBe('string');
    expect(new Set(both.map((p) => p.id)).size).toBe(2);
    expect(await received(other.path)).toEqual([]);
  });

  it('are not recorded for an account without webhooks', async () => {
    const account = await manageAccount({ tools: 'free' });
    await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name: 'x', scopes: ['image'] } });
    const rows = await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_outbox WHERE account_id = ?')
      .bind(account.accountId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });
});

describe('usage.threshold and rate_limit.exceeded', () => {
  it('fire exactly once each for the tools day, under concurrent requests', async () => {
    const account = await manageAccount({ tools: 'developer' });
    const endpoint = await addEndpoint(account.key, ['usage.threshold', 'rate_limit.exceeded']);
    const tools = await addKey(account, ['tools']);
    const perDay = TOOLS_TIERS.developer.perDay!;
    const meter = env.METER.get(env.METER.idFromName(await hashKey(tools.key)));
    // The Worker's clock held at noon: the day cannot end mid-test.
    const clock = new TestClock(dayWindow(Date.now()).start + 12 * 3_600_000);
    const day = dayWindow(clock.now);
    // 10 short of 80 %: then 40 requests at once cross it (and only once).
    await runInDurableObject(meter, (_instance, state) =>
      new Counters(state.storage.sql).add('day', day.start, Math.ceil(perDay * 0.8) - 10),
    );
    const first = await Promise.all(
      Array.from({ length: 40 }, () => call('/api/v1/categories', { headers: toolsHeaders(tools.key), clock })),
    );
    expect(first.every((r) => r.status === 200)).toBe(true);
    const [eighty] = await payloads(endpoint, 1);
    expect(eighty).toMatchObject({
      type: 'usage.threshold',
      data: { key_id: tools.id, api: 'tools', window: 'day', percent: 80, limit: perDay },
    });
    // 10 short of the day's end: 40 at once make 100 % once and the first 429 once.
    await runInDurableObject(meter, (_instance, state) =>
      new Counters(state.storage.sql).add('day', day.start, perDay - 10 - (Math.ceil(perDay * 0.8) + 30)),
    );
    const second = await Promise.all(
      Array.from({ length: 40 }, () => call('/api/v1/categories', { headers: toolsHeaders(tools.key), clock })),
    );
    expect(second.filter((r) => r.status === 200)).toHaveLength(10);
    expect(second.filter((r) => r.status === 429)).toHaveLength(30);
    const all = await payloads(endpoint, 3);
    await settle();
    const events = (await payloads(endpoint, 3)).map((p) => [p.type, p.data.percent ?? p.data.window]);
    expect(events.sort()).toEqual([
      ['rate_limit.exceeded', 'day'],
      ['usage.threshold', 100],
      ['usage.threshold', 80],
    ]);
    expect(all.find((p) => p.data.percent === 100)?.data).toMatchObject({
      used: perDay,
      limit: perDay,
      reset: Math.floor(day.end / 1000),
    });
  });

  it('rate_limit.exceeded fires once per minute window', async () => {
    const account = await manageAccount({ tools: 'developer' });
    const endpoint = await addEndpoint(account.key, ['rate_limit.exceeded']);
    const tools = await addKey(account, ['tools']);
    const perMinute = TOOLS_TIERS.developer.perMinute;
    const meter = env.METER.get(env.METER.idFromName(await hashKey(tools.key)));
    // The Worker's clock held 10 s into a minute, so all of this lands in one minute window (real time
    // could cross a minute's end mid-test; waiting for the next one would outlast the test's timeout).
    const clock = new TestClock(minuteWindow(Date.now()).start + 10_000);
    await runInDurableObject(meter, (_i, state) =>
      new Counters(state.storage.sql).add('minute', minuteWindow(clock.now).start, perMinute - 5),
    );
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => call('/api/v1/categories', { headers: toolsHeaders(tools.key), clock })),
    );
    expect(answers.filter((r) => r.status === 429)).toHaveLength(25);
    const [only] = await payloads(endpoint, 1);
    await settle();
    expect(messages(await received(endpoint.path))).toHaveLength(1);
    expect(only).toMatchObject({
      type: 'rate_limit.exceeded',
      data: { key_id: tools.id, api: 'tools', window: 'minute', limit: perMinute },
    });
  });

  it("fire exactly once each for the image API's month, under concurrent compressions", async () => {
    const account = await manageAccount({ tools: 'developer', image: 'free' });
    const endpoint = await addEndpoint(account.key, ['usage.threshold', 'rate_limit.exceeded']);
    const image = await addKey(account, ['image']);
    // The Worker's clock held on the 10th: the month cannot end mid-test.
    const clock = new TestClock(monthWindow(Date.now()).start + 9 * 86_400_000);
    const month = monthWindow(clock.now);
    const accountMeter = env.ACCOUNT_METER.get(env.ACCOUNT_METER.idFromName(account.accountId));
    // 75 of the free tier's 100 used: 30 compressions at once cross 80 % and 100 %, and 5 are refused.
    await runInDurableObject(accountMeter, (_i, state) =>
      new Counters(state.storage.sql).add('month', month.start, 75),
    );
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        compressCall(image.key, { image: TINY, filename: 'a.png' }, { env: ROOMY, clock }),
      ),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(25);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(5);
    await payloads(endpoint, 3);
    await settle();
    const all = await payloads(endpoint, 3);
    expect(all).toHaveLength(3);
    expect(all.map((p) => [p.type, p.data.percent ?? p.data.window]).sort()).toEqual([
      ['rate_limit.exceeded', 'month'],
      ['usage.threshold', 100],
      ['usage.threshold', 80],
    ]);
    for (const p of all)
      expect(p.data).toMatchObject({ key_id: image.id, api: 'image', limit: 100, reset: Math.floor(month.end / 1000) });
  });
});

describe('the outbox sweep (cron trigger)', () => {
  it('hands over events whose hand-off was lost', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    // As if the request that wrote it died between its D1 batch and the call to the dispatcher.
    const id = `msg_lost_${crypto.randomUUID().slice(0, 8)}`;
    const body = JSON.stringify({
      type: 'key.created',
      timestamp: new Date().toISOString(),
      data: { key_id: 'key_lost' },
    });
    await env.DB.prepare('INSERT INTO webhook_outbox (id, account_id, type, body, created_at) VALUES (?, ?, ?, ?, ?)')
      .bind(id, account.accountId, 'key.created', body, Date.now() - 120_000)
      .run();
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: '*/5 * * * *' }), env, ctx);
    await waitOnExecutionContext(ctx);
    const [got] = await payloads(endpoint, 1);
    expect(got).toMatchObject({ id, type: 'key.created', data: { key_id: 'key_lost' } });
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_outbox WHERE id = ?')
      .bind(id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });
});

describe("a meter's hand-off", () => {
  it('survives the meter being restarted before its alarm ran', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['usage.threshold']);
    const tools = await addKey(account, ['tools']);
    const meter = env.METER.get(env.METER.idFromName(await hashKey(tools.key)));
    // Recorded as the meter records (outbox row and alarm in its storage), with the alarm a moment away,
    // then every instance thrown away: only storage is left to deliver it.
    const id = await runInDurableObject(meter, async (_i, state) => {
      const e = new MeterOutbox(state.storage.sql).record(account.accountId, 'usage.threshold', Date.now(), {
        key_id: tools.id,
        percent: 80,
      });
      await state.storage.setAlarm(Date.now() + 300);
      return e.id;
    });
    await abortAllDurableObjects();
    const [got] = await payloads(endpoint, 1);
    expect(got).toMatchObject({ id, type: 'usage.threshold', data: { key_id: tools.id, percent: 80 } });
  });
});
