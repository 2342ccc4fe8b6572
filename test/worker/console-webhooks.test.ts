// The console's webhooks page, as a browser uses it: add an endpoint (secret shown once), send a test,
// read the delivery log, retry, edit, disable, rotate the secret, delete.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { signedUp } from './console-helpers.ts';
import { hookPath, RECEIVER, received, verified, waitFor } from './webhook-helpers.ts';

async function developer() {
  const person = await signedUp();
  const account = await env.DB.prepare('SELECT id FROM accounts WHERE email = ?')
    .bind(person.email)
    .first<{ id: string }>();
  await env.DB.prepare("UPDATE accounts SET tools_tier = 'developer' WHERE id = ?").bind(account!.id).run();
  return person;
}

const secretOf = (html: string) => /data-testid="new-secret" type="text" readonly value="([^"]+)"/.exec(html)?.[1];
const endpointIdOf = (html: string) => /data-endpoint-id="([^"]+)"/.exec(html)?.[1];

describe('the webhooks page', () => {
  it('tells a free account that webhooks come with the developer tier', async () => {
    const { browser } = await signedUp();
    const page = await browser.page('/webhooks');
    expect(page.res.status).toBe(200);
    expect(page.html).toContain('developer');
    expect(page.html).not.toContain('action="/webhooks"');
  });

  it('adds an endpoint, shows its secret once, sends a test, logs it, and retries it with the same id', async () => {
    const { browser, csrf } = await developer();
    const path = hookPath();
    const added = await browser.post('/webhooks', {
      _csrf: csrf,
      url: RECEIVER + path,
      description: 'alerts',
      events: ['usage.threshold', 'key.created'],
    });
    expect(added.status).toBe(200);
    const html = await added.text();
    const secret = secretOf(html);
    expect(secret).toMatch(/^whsec_/);
    const id = endpointIdOf(html)!;
    const again = await browser.page('/webhooks');
    expect(again.html).toContain(RECEIVER + path);
    expect(again.html).not.toContain(secret);

    const test = await browser.post(`/webhooks/${id}/test`, { _csrf: csrf });
    expect(test.status).toBe(303);
    expect(test.headers.get('location')).toBe(`/webhooks/${id}?done=test`);
    const [got] = await waitFor(
      () => received(path),
      (r) => r.length === 1,
    );
    expect(verified({ secret: secret! }, got!).type).toBe('webhook.test');
    const msgId = got!.headers['webhook-id']!;
    const log = await waitFor(
      () => browser.page(`/webhooks/${id}`),
      (p) => p.html.includes('succeeded'),
    );
    expect(log.html).toContain(msgId);

    expect((await browser.post(`/webhooks/${id}/deliveries/${msgId}/retry`, { _csrf: csrf })).status).toBe(303);
    const both = await waitFor(
      () => received(path),
      (r) => r.length === 2,
    );
    expect(both[1]!.headers['webhook-id']).toBe(msgId);
  });

  it('refuses a private URL and a form without its token, keeping the values', async () => {
    const { browser, csrf } = await developer();
    const bad = await browser.post('/webhooks', { _csrf: csrf, url: 'https://10.0.0.8/hook', events: ['key.created'] });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(html).toContain('The URL is not allowed');
    expect(html).toContain('value="https://10.0.0.8/hook"');
    expect(
      (await browser.post('/webhooks', { _csrf: 'wrong', url: RECEIVER + hookPath(), events: ['key.created'] })).status,
    ).toBe(403);
    expect((await browser.post('/webhooks', { _csrf: csrf, url: RECEIVER + hookPath() })).status).toBe(400);
  });

  it('edits, disables, rotates the secret and deletes', async () => {
    const { browser, csrf } = await developer();
    const html = await (
      await browser.post('/webhooks', { _csrf: csrf, url: RECEIVER + hookPath(), events: ['key.created'] })
    ).text();
    const id = endpointIdOf(html)!;
    const url = RECEIVER + hookPath();
    const saved = await browser.post(`/webhooks/${id}`, {
      _csrf: csrf,
      url,
      description: 'renamed',
      events: ['key.revoked'],
    });
    expect(saved.status).toBe(303);
    const page = await browser.page(`/webhooks/${id}?done=saved`);
    expect(page.html).toContain('Saved.');
    expect(page.html).toContain('Disabled');
    expect(page.html).toContain('disabled by its owner');
    expect(page.html).toContain(`value="${url}"`);
    const rotated = await browser.post(`/webhooks/${id}/rotate-secret`, { _csrf: csrf });
    expect(secretOf(await rotated.text())).toMatch(/^whsec_/);
    expect((await browser.post(`/webhooks/${id}/delete`, { _csrf: csrf })).status).toBe(303);
    expect((await browser.page(`/webhooks/${id}`)).res.status).toBe(404);
  });
});
