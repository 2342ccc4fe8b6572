// Signing secrets of image URLs over the management API and the console: shown once, at most two,
// listed without the secret, deleted; a manage key or the session only. A secret made here signs URLs.
import { describe, expect, it } from 'vitest';
import { signedPath } from '../../src/img/signature.ts';
import { call, makeKey } from './helpers.ts';
import { signedUp } from './console-helpers.ts';
import { expectError, getImage, gradient } from './img-helpers.ts';
import { manage, manageAccount } from './webhook-helpers.ts';

interface Secret {
  id: string;
  created_at: string;
  secret?: string;
}

const PATH = '/api/v1/signing-secrets';

describe('the management API', () => {
  it('creates (201, the secret once), lists without secrets, caps at two, deletes; the secret signs image URLs', async () => {
    const account = await manageAccount({ image: 'pro' });
    const first = await manage(account.key, PATH, { method: 'POST' });
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const one = ((await first.json()) as { data: Secret }).data;
    expect(one.secret).toMatch(/^srsig_[A-Za-z0-9_-]{43}$/);
    expect(one.id).toMatch(/^sig_/);
    expect(first.headers.get('location')).toBe(`${PATH}/${one.id}`);

    const url = gradient().url;
    const image = await getImage(await signedPath(account.accountId, one.secret!, 'w=32', url));
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');

    const two = ((await (await manage(account.key, PATH, { method: 'POST' })).json()) as { data: Secret }).data;
    const third = await manage(account.key, PATH, { method: 'POST' });
    const error = await expectError(third, 400, 'bad_request');
    expect(error.message).toMatch(/at most 2 signing secrets/);

    const listed = (await (await manage(account.key, PATH)).json()) as { data: Secret[]; meta: { total: number } };
    expect(listed.meta.total).toBe(2);
    expect(listed.data.map((s) => s.id).sort()).toEqual([one.id, two.id].sort());
    expect(JSON.stringify(listed)).not.toContain('srsig_');

    const deleted = await manage(account.key, `${PATH}/${one.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ data: { id: one.id, deleted: true } });
    await expectError(await manage(account.key, `${PATH}/${one.id}`, { method: 'DELETE' }), 404, 'not_found');
    // Its URLs are refused from now on, the cached one too.
    await expectError(await getImage(await signedPath(account.accountId, one.secret!, 'w=32', url)), 403, 'forbidden');
    expect((await manage(account.key, PATH, { method: 'POST' })).status).toBe(201);
  });

  it('takes a manage key only, and never reaches another account', async () => {
    const other = await manageAccount();
    const theirs = ((await (await manage(other.key, PATH, { method: 'POST' })).json()) as { data: Secret }).data;
    const mine = await manageAccount();
    await expectError(await manage(mine.key, `${PATH}/${theirs.id}`, { method: 'DELETE' }), 404, 'not_found');
    expect(((await (await manage(mine.key, PATH)).json()) as { data: Secret[] }).data).toEqual([]);

    const image = await makeKey({ scopes: ['image', 'tools'] });
    for (const method of ['GET', 'POST'] as const) {
      await expectError(await manage(image.key, PATH, { method }), 403, 'forbidden');
    }
    await expectError(await call(PATH, { method: 'POST' }), 401, 'unauthorized');
  });
});

describe('allowed source hosts', () => {
  it('are read and replaced as a whole, checked, lower-cased, deduplicated and sorted', async () => {
    const account = await manageAccount();
    const path = '/api/v1/image-source-hosts';
    expect(await (await manage(account.key, path)).json()).toMatchObject({ data: { hosts: [] } });
    const put = await manage(account.key, path, {
      method: 'PUT',
      body: { hosts: ['Images.Example.com', '*.cdn.example.net', 'images.example.com'] },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ data: { hosts: ['*.cdn.example.net', 'images.example.com'] } });
    expect(await (await manage(account.key, path)).json()).toMatchObject({
      data: { hosts: ['*.cdn.example.net', 'images.example.com'] },
    });
    for (const [body, message] of [
      [{ hosts: ['https://example.com'] }, /must be a host name/],
      [{ hosts: ['*.'] }, /must be a host name/],
      [{ hosts: Array.from({ length: 21 }, (_, i) => `h${i}.example.com`) }, /at most 20 hosts/],
      [{ hosts: [], extra: 1 }, /extra|unrecognized|unknown/i],
    ] as const) {
      const error = await expectError(await manage(account.key, path, { method: 'PUT', body }), 400, 'bad_request');
      expect(error.message).toMatch(message);
    }
    const image = await makeKey({ scopes: ['image'] });
    await expectError(await manage(image.key, path), 403, 'forbidden');
  });
});

describe('the console', () => {
  it('creates a secret shown once, lists it, deletes it after a confirmation; forms need the CSRF token', async () => {
    const { browser, csrf } = await signedUp();
    const empty = await browser.page('/signing-secrets');
    expect(empty.res.status).toBe(200);
    expect(empty.html).toContain('No secrets yet');
    expect(empty.html).toMatch(/data-testid="account-id">acc_/);

    const refused = await browser.post('/signing-secrets', { _csrf: 'wrong' });
    expect(refused.status).toBe(403);

    const created = await browser.post('/signing-secrets', { _csrf: csrf });
    expect(created.status).toBe(200);
    const page = await created.text();
    const secret = /data-testid="new-secret" type="text" readonly value="(srsig_[^"]+)"/.exec(page)?.[1];
    expect(secret).toBeDefined();
    const id = /data-secret-id="(sig_[^"]+)"/.exec(page)![1]!;

    const listed = await browser.page('/signing-secrets');
    expect(listed.html).toContain(id);
    expect(listed.html).not.toContain(secret!);

    // The JSON API answers the session too (with the CSRF header on unsafe methods).
    const json = await browser.json('/api/v1/signing-secrets');
    expect(((await json.json()) as { data: Secret[] }).data.map((s) => s.id)).toEqual([id]);

    const confirm = await browser.page(`/signing-secrets/${id}/delete`);
    expect(confirm.html).toContain('Delete secret');
    const gone = await browser.post(`/signing-secrets/${id}/delete`, { _csrf: csrf });
    expect(gone.status).toBe(303);
    expect(gone.headers.get('location')).toBe(`/signing-secrets?deleted=${id}`);
    const after = await browser.page(`/signing-secrets?deleted=${id}`);
    expect(after.html).toContain(`The secret ${id} is deleted`);
    expect(after.html).toContain('No secrets yet');
    expect((await browser.page(`/signing-secrets/${id}/delete`)).res.status).toBe(404);
  });
});
