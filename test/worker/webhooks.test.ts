// Webhook endpoints end to end: registration (tier, cap, URL rules), Standard Webhooks signatures checked
// by the standardwebhooks package, retries with the same id, deliveries that survive the dispatcher being
// restarted, the delivery log, manual retry and automatic disabling.
import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import {
  MAX_CONCURRENT_DELIVERIES,
  MAX_ENDPOINTS_PER_ACCOUNT,
  MAX_MANUAL_SENDS_PER_HOUR,
} from '../../src/webhooks/limits.ts';
import { FORBIDDEN_HOSTS } from './helpers.ts';
import {
  addEndpoint,
  type Endpoint,
  failNext,
  hookPath,
  manage,
  manageAccount,
  RECEIVER,
  received,
  verified,
  waitFor,
} from './webhook-helpers.ts';

interface Envelope<T> {
  data: T;
  error?: { code: string; message: string; param?: string };
}
const read = async <T>(res: Response) => (await res.json()) as Envelope<T>;
/** Asks for a webhook.test message to the endpoint (POST …/test), answering as the service answered. */
const sendTest = (key: string, endpointId: string) =>
  manage(key, `/api/v1/webhooks/${endpointId}/test`, { method: 'POST' });

interface Delivery {
  msg_id: string;
  state: string;
  attempts: { status: number | null; error: string | null }[];
}
/** The endpoint's delivery log, once its newest delivery has succeeded. */
const succeededLog = (key: string, endpointId: string) =>
  waitFor(
    async () => (await read<Delivery[]>(await manage(key, `/api/v1/webhooks/${endpointId}/deliveries`))).data,
    (l) => l[0]?.state === 'succeeded',
  );

describe('webhook endpoints', () => {
  it('need the developer or enterprise tools tier', async () => {
    const free = await manageAccount({ tools: 'free' });
    const res = await manage(free.key, '/api/v1/webhooks', {
      method: 'POST',
      body: { url: `${RECEIVER}/hooks/x`, events: ['key.created'] },
    });
    expect(res.status).toBe(403);
    expect((await read(res)).error?.code).toBe('plan_upgrade_required');
    expect((await manage(free.key, '/api/v1/webhooks')).status).toBe(403);
    const enterprise = await manageAccount({ tools: 'enterprise' });
    await addEndpoint(enterprise.key, ['key.created']);
  });

  it('show the secret on create and rotate only', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created', 'usage.threshold']);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const one = await read<Record<string, unknown>>(await manage(account.key, `/api/v1/webhooks/${endpoint.id}`));
    expect(one.data).not.toHaveProperty('secret');
    expect(one.data).toMatchObject({
      id: endpoint.id,
      url: RECEIVER + endpoint.path,
      events: ['key.created', 'usage.threshold'],
      enabled: true,
      disabled_reason: null,
    });
    const list = await read<Record<string, unknown>[]>(await manage(account.key, '/api/v1/webhooks'));
    expect(list.data.map((e) => e.id)).toEqual([endpoint.id]);
    expect(JSON.stringify(list)).not.toContain(endpoint.secret);
    const rotated = await read<{ secret: string }>(
      await manage(account.key, `/api/v1/webhooks/${endpoint.id}/rotate-secret`, { method: 'POST' }),
    );
    expect(rotated.data.secret).toMatch(/^whsec_/);
    expect(rotated.data.secret).not.toBe(endpoint.secret);
  });

  it(`are at most ${MAX_ENDPOINTS_PER_ACCOUNT} per account`, async () => {
    const account = await manageAccount();
    for (let i = 0; i < MAX_ENDPOINTS_PER_ACCOUNT; i++) await addEndpoint(account.key, ['key.created']);
    const res = await manage(account.key, '/api/v1/webhooks', {
      method: 'POST',
      body: { url: `${RECEIVER}/hooks/one-more`, events: ['key.created'] },
    });
    expect(res.status).toBe(400);
    expect((await read(res)).error?.message).toContain(`at most ${MAX_ENDPOINTS_PER_ACCOUNT}`);
  });

  it('refuse URLs the fetch rules refuse, and plain http', async () => {
    const account = await manageAccount();
    const refused = [
      'http://example.com/hook', // https only
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      ...FORBIDDEN_HOSTS.map((host) => `https://${host}/hook`),
      'https://example.com:8443/hook',
      'https://user:pw@example.com/hook',
      'ftp://example.com/hook',
      'not a url',
      `${RECEIVER.replace('127.0.0.1', 'localhost')}/hooks/x`, // only the exact test origin is let through
    ];
    for (const url of refused) {
      const res = await manage(account.key, '/api/v1/webhooks', {
        method: 'POST',
        body: { url, events: ['key.created'] },
      });
      const body = await read(res);
      expect(res.status, url).toBe(400);
      expect(body.error?.param, url).toBe('url');
    }
    const endpoint = await addEndpoint(account.key, ['key.created']);
    const patched = await manage(account.key, `/api/v1/webhooks/${endpoint.id}`, {
      method: 'PATCH',
      body: { url: 'https://192.168.1.1/x' },
    });
    expect(patched.status).toBe(400);
    expect(
      (
        await manage(account.key, '/api/v1/webhooks', {
          method: 'POST',
          body: { url: 'https://example.com/x', events: ['nope'] },
        })
      ).status,
    ).toBe(400);
  });

  it('send a test message signed as Standard Webhooks says (verified by the standardwebhooks package)', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    const res = await sendTest(account.key, endpoint.id);
    expect(res.status).toBe(202);
    const { data } = await read<{ msg_id: string }>(res);
    const [got] = await waitFor(
      () => received(endpoint.path),
      (r) => r.length === 1,
    );
    expect(got!.headers['webhook-id']).toBe(data.msg_id);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = verified(endpoint, got!);
    expect(payload.type).toBe('webhook.test');
    expect(Object.keys(payload)).toEqual(['type', 'timestamp', 'data']);
    expect(payload.data.endpoint_id).toBe(endpoint.id);
    // A wrong secret does not verify.
    expect(() => verified({ secret: 'whsec_' + btoa('x'.repeat(32)) }, got!)).toThrow();
  });

  it('retry a failing receiver on the schedule with the same id, and log every attempt', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    await failNext(endpoint.path, 2);
    const { data } = await read<{ msg_id: string }>(await sendTest(account.key, endpoint.id));
    const got = await waitFor(
      () => received(endpoint.path),
      (r) => r.length === 3,
    );
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([data.msg_id, data.msg_id, data.msg_id]);
    expect(got.map((r) => r.status)).toEqual([500, 500, 200]);
    // Each attempt is signed for its own time, and each verifies; the body is the same bytes every time.
    for (const r of got) expect(verified(endpoint, r).type).toBe('webhook.test');
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    // The schedule's steps (300 ms in the tests' vars) separate the attempts.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(250);
    const log = await succeededLog(account.key, endpoint.id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      msg_id: data.msg_id,
      type: 'webhook.test',
      state: 'succeeded',
      next_attempt_at: null,
    });
    expect(log[0]!.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
  });

  it('count a 2xx that comes too late as a failure, and retry it', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    // WEBHOOK_ATTEMPT_TIMEOUT_MS is 1.5 s in the tests' vars (15 s deployed); this answer takes 2.5 s.
    await failNext(endpoint.path, 1, { status: 200, delay: 2_500 });
    const { data } = await read<{ msg_id: string }>(await sendTest(account.key, endpoint.id));
    const log = await succeededLog(account.key, endpoint.id);
    expect(log[0]!.attempts).toEqual([
      expect.objectContaining({ status: null, error: 'no answer within 1.5 s' }),
      expect.objectContaining({ status: 200, error: null }),
    ]);
    expect((await received(endpoint.path)).map((r) => r.headers['webhook-id'])).toEqual([data.msg_id, data.msg_id]);
  });

  it('to a slow endpoint delay only that endpoint: another endpoint of the account receives its delivery while it hangs', async () => {
    const account = await manageAccount();
    const slow = await addEndpoint(account.key, ['key.created']);
    const fast = await addEndpoint(account.key, ['key.created']);
    // Past the attempt timeout (1.5 s in the tests' vars): the slow attempt holds its connection 1.5 s.
    await failNext(slow.path, 1, { status: 200, delay: 3_000 });
    expect((await manage(account.key, `/api/v1/webhooks/${slow.id}/test`, { method: 'POST' })).status).toBe(202);
    const [hanging] = await waitFor(
      () => received(slow.path),
      (r) => r.length === 1,
    );
    expect((await manage(account.key, `/api/v1/webhooks/${fast.id}/test`, { method: 'POST' })).status).toBe(202);
    const [delivered] = await waitFor(
      () => received(fast.path),
      (r) => r.length === 1,
    );
    // Received while the slow attempt still waits for its answer (it gives up 1.5 s after it started).
    expect(delivered!.at - hanging!.at).toBeLessThan(1_000);
    expect(delivered!.status).toBe(200);
    // The slow one is retried on its own schedule and gets its message too.
    await waitFor(
      () => received(slow.path),
      (r) => r.some((x) => x.status === 200 && x.at > hanging!.at),
    );
  });

  it(`have at most ${MAX_CONCURRENT_DELIVERIES} attempts in flight per account, one per endpoint`, async () => {
    const account = await manageAccount();
    const endpoints: Endpoint[] = [];
    for (let i = 0; i <= MAX_CONCURRENT_DELIVERIES; i++)
      endpoints.push(await addEndpoint(account.key, ['key.created']));
    // Every endpoint holds its first attempt past the timeout (1.5 s), so none frees its slot early.
    for (const e of endpoints) await failNext(e.path, 1, { status: 200, delay: 3_000 });
    expect(
      (await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name: 'CI', scopes: ['tools'] } })).status,
    ).toBe(201);
    // Each endpoint's first attempt, in order of arrival (a slow machine may already show retries after them).
    const arrivals = async () =>
      (await Promise.all(endpoints.map((e) => received(e.path))))
        .filter((r) => r.length > 0)
        .map((r) => r[0]!.at)
        .sort((a, b) => a - b);
    const first = await waitFor(arrivals, (a) => a.length >= MAX_CONCURRENT_DELIVERIES);
    await new Promise((r) => setTimeout(r, 500));
    expect(await arrivals()).toHaveLength(MAX_CONCURRENT_DELIVERIES);
    // The last endpoint gets its attempt when one of the others times out.
    const all = await waitFor(arrivals, (a) => a.length === MAX_CONCURRENT_DELIVERIES + 1);
    expect(all.at(-1)! - first[0]!).toBeGreaterThanOrEqual(1_400);
  }, 20_000);

  it('never follow a redirect: a 3xx is a failed attempt', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    // The receiver answers 302 towards http://10.0.0.1/ once, then 200.
    await failNext(endpoint.path, 1, { status: 302 });
    await sendTest(account.key, endpoint.id);
    const log = await succeededLog(account.key, endpoint.id);
    expect(log[0]!.attempts.map((a) => [a.status, a.error])).toEqual([
      [302, 'the endpoint answered 302'],
      [200, null],
    ]);
    expect((await received(endpoint.path)).map((r) => r.status)).toEqual([302, 200]);
  });

  it('keep delivering after the dispatcher is restarted mid-schedule', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    await failNext(endpoint.path, 1);
    const { data } = await read<{ msg_id: string }>(await sendTest(account.key, endpoint.id));
    await waitFor(
      () => received(endpoint.path),
      (r) => r.length === 1,
    );
    // Every Durable Object instance is thrown away (storage kept): the next attempt must come from the
    // alarm in storage, not from anything the old instance held in memory.
    await abortAllDurableObjects();
    const got = await waitFor(
      () => received(endpoint.path),
      (r) => r.length === 2,
    );
    expect(got.map((r) => [r.headers['webhook-id'], r.status])).toEqual([
      [data.msg_id, 500],
      [data.msg_id, 200],
    ]);
    verified(endpoint, got[1]!);
  });

  it('retry a message by hand, with the same id', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    const { data } = await read<{ msg_id: string }>(await sendTest(account.key, endpoint.id));
    await waitFor(
      () => received(endpoint.path),
      (r) => r.length === 1,
    );
    const res = await manage(account.key, `/api/v1/webhooks/${endpoint.id}/deliveries/${data.msg_id}/retry`, {
      method: 'POST',
    });
    expect(res.status).toBe(202);
    const got = await waitFor(
      () => received(endpoint.path),
      (r) => r.length === 2,
    );
    expect(got[1]!.headers['webhook-id']).toBe(data.msg_id);
    expect(
      (await manage(account.key, `/api/v1/webhooks/${endpoint.id}/deliveries/msg_unknown/retry`, { method: 'POST' }))
        .status,
    ).toBe(404);
  });

  it(`allow at most ${MAX_MANUAL_SENDS_PER_HOUR} tests and manual retries per account per hour`, async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    const answers = [];
    for (let i = 0; i < MAX_MANUAL_SENDS_PER_HOUR; i++) answers.push((await sendTest(account.key, endpoint.id)).status);
    expect(answers.every((s) => s === 202)).toBe(true);
    const over = await sendTest(account.key, endpoint.id);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect((await read(over)).error?.code).toBe('rate_limit_exceeded');
    // One attempt at a time per endpoint (MAX_CONCURRENT_DELIVERIES): the 60 arrive one after another.
    const got = await waitFor(
      () => received(endpoint.path),
      (r) => r.length === MAX_MANUAL_SENDS_PER_HOUR,
      25_000,
    );
    const retry = await manage(
      account.key,
      `/api/v1/webhooks/${endpoint.id}/deliveries/${got[0]!.headers['webhook-id']}/retry`,
      { method: 'POST' },
    );
    expect(retry.status).toBe(429);
  }, 30_000);

  it('disable an endpoint that keeps failing, and say so', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    await failNext(endpoint.path, -1);
    await sendTest(account.key, endpoint.id);
    // WEBHOOK_DISABLE_AFTER_MS is 2 s in the tests' vars; the eight attempts span 2.1 s.
    const after = await waitFor(
      async () =>
        (
          await read<{ enabled: boolean; disabled_reason: string | null }>(
            await manage(account.key, `/api/v1/webhooks/${endpoint.id}`),
          )
        ).data,
      (e) => !e.enabled,
    );
    expect(after.disabled_reason).toMatch(/disabled automatically: every delivery attempt failed/);
    const test = await sendTest(account.key, endpoint.id);
    expect(test.status).toBe(400);
    // Enabling it again clears the reason.
    const on = await read<{ enabled: boolean; disabled_reason: string | null }>(
      await manage(account.key, `/api/v1/webhooks/${endpoint.id}`, { method: 'PATCH', body: { enabled: true } }),
    );
    expect(on.data).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('are deleted with their log', async () => {
    const account = await manageAccount();
    const endpoint = await addEndpoint(account.key, ['key.created']);
    expect((await manage(account.key, `/api/v1/webhooks/${endpoint.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await manage(account.key, `/api/v1/webhooks/${endpoint.id}`)).status).toBe(404);
    expect((await manage(account.key, `/api/v1/webhooks/${endpoint.id}/deliveries`)).status).toBe(404);
    const other = await manageAccount();
    const theirs = await addEndpoint(other.key, ['key.created'], hookPath());
    expect((await manage(account.key, `/api/v1/webhooks/${theirs.id}`)).status).toBe(404);
  });
});
