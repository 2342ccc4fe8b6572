// A key never holds more than its maker may. A manage key acts as an admin, so only owners and admins (and
// manage keys) make one, in the console and over the API; it records its maker and is revoked in the batch
// that removes that member or demotes them below admin, answering 401 from its next request on. Image and
// tools keys belong to the account and stay. The keys list says who made each key.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { call, toolsHeaders } from './helpers.ts';
import { enterpriseTeam, join, type Person } from './team-helpers.ts';
import { addEndpoint, addKey, manage, messages, received, verified, waitFor } from './webhook-helpers.ts';

interface KeyJson {
  id: string;
  key?: string;
  scopes: string[];
  revoked_at: string | null;
  created_by: { type: string; id: string | null; email: string | null };
}

interface ErrorJson {
  error: { code: string; message: string; details?: { permission?: string } };
}

/** A key made by a member over the JSON API (their session); the answer and its body. */
async function apiKey(person: Person, scopes: string[], name = `k-${scopes.join('-')}`) {
  const res = await person.browser.json('/api/v1/keys', { method: 'POST', csrf: person.csrf, body: { name, scopes } });
  return { res, body: (await res.json()) as { data: KeyJson } & ErrorJson };
}

/** A key made by a member with the console's form; the page's status, its HTML and the key it shows once. */
async function formKey(person: Person, scopes: string[], name = 'from the form') {
  const page = await person.browser.page('/keys');
  const res = await person.browser.post('/keys', { _csrf: page.csrf, name, scopes });
  const html = await res.text();
  return {
    status: res.status,
    html,
    key: /data-testid="new-key"[^>]*value="(sr_live_[0-9A-Za-z]{32})"/.exec(html)?.[1],
  };
}

const keyIdOf = async (secret: string): Promise<string> => {
  const row = await env.DB.prepare('SELECT id FROM api_keys WHERE prefix = ? ORDER BY created_at DESC')
    .bind(secret.slice(0, 12))
    .first<{ id: string }>();
  return row!.id;
};

const members = (key: string) => manage(key, '/api/v1/members');

async function lastRecord(
  accountId: string,
  action: string,
): Promise<{ actor_id: string; target: string; details: Record<string, unknown> }> {
  const row = await env.DB.prepare(
    'SELECT actor_id, target, details FROM audit_logs WHERE account_id = ? AND action = ? ORDER BY seq DESC LIMIT 1',
  )
    .bind(accountId, action)
    .first<{ actor_id: string; target: string; details: string }>();
  return { ...row!, details: JSON.parse(row!.details) as Record<string, unknown> };
}

describe('who may make a manage key', () => {
  it('not a developer, over the API or in the console: 403 forbidden, and the way to admin stays shut', async () => {
    const team = await enterpriseTeam();
    const dev = await join(team, 'developer');

    const viaApi = await apiKey(dev, ['manage']);
    expect(viaApi.res.status).toBe(403);
    expect(viaApi.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'keys:manage' } });

    // The console does not offer it, and refuses a form that asks for it anyway.
    expect((await dev.browser.page('/keys')).html).not.toContain('value="manage"');
    const viaForm = await formKey(dev, ['manage']);
    expect(viaForm.status).toBe(403);
    expect(viaForm.html).toContain('cannot make management keys');
    expect(viaForm.key).toBeUndefined();

    const made = await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ? AND scopes = 'manage'")
      .bind(team.accountId)
      .first<{ n: number }>();
    expect(made!.n).toBe(0);
    // Without a manage key, the developer can neither promote themself nor read the audit log.
    expect(
      (
        await dev.browser.json(`/api/v1/members/${dev.memberId}`, {
          method: 'PATCH',
          csrf: dev.csrf,
          body: { role: 'admin' },
        })
      ).status,
    ).toBe(403);
    expect((await dev.browser.json('/api/v1/audit-logs')).status).toBe(403);

    // Image and tools keys stay theirs to make, and record them.
    const tools = await apiKey(dev, ['tools']);
    expect(tools.res.status).toBe(201);
    expect(tools.body.data.created_by).toEqual({ type: 'member', id: dev.memberId, email: dev.email });
  });

  it('owners and admins may; the key records them, and a key made by a manage key records the same maker', async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    const byAdmin = await apiKey(admin, ['manage']);
    expect(byAdmin.res.status).toBe(201);
    expect(byAdmin.body.data.created_by).toEqual({ type: 'member', id: admin.memberId, email: admin.email });
    const byOwner = await formKey(team.owner, ['manage']);
    expect(byOwner.status).toBe(200);
    expect(byOwner.key).toBeDefined();

    const byKey = await manage(byAdmin.body.data.key!, '/api/v1/keys', {
      method: 'POST',
      body: { name: 'made by a key', scopes: ['manage'] },
    });
    expect(byKey.status).toBe(201);
    expect(((await byKey.json()) as { data: KeyJson }).data.created_by).toEqual({
      type: 'member',
      id: admin.memberId,
      email: admin.email,
    });

    // The operator CLI's manage key has no member; neither has a key it makes.
    const operator = await addKey({ key: '', id: '', accountId: team.accountId }, ['manage']);
    const byOperator = await manage(operator.key, '/api/v1/keys', {
      method: 'POST',
      body: { name: 'made by the operator key', scopes: ['manage'] },
    });
    expect(byOperator.status).toBe(201);
    expect(((await byOperator.json()) as { data: KeyJson }).data.created_by).toEqual({
      type: 'operator',
      id: null,
      email: null,
    });
  });

  it('a manage key whose maker lost the role since its last request cannot make another (the insert checks the role)', async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    const key = (await apiKey(admin, ['manage'])).body.data.key!;
    expect((await members(key)).status).toBe(200);
    // The role changes under the key without the service (as a demotion landing between the key's check
    // and its insert would): the key's Durable Object still holds it valid.
    await env.DB.prepare("UPDATE members SET role = 'developer' WHERE id = ?").bind(admin.memberId).run();
    const refused = await manage(key, '/api/v1/keys', { method: 'POST', body: { name: 'late', scopes: ['manage'] } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as ErrorJson).error).toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('no longer an owner or admin'),
    });
    expect(
      (await manage(key, '/api/v1/keys', { method: 'POST', body: { name: 'tools', scopes: ['tools'] } })).status,
    ).toBe(201);
  });
});

describe("a manage key dies with its maker's role", () => {
  it('demoting an admin to developer revokes the manage keys they made (console and API): 401 on the next request', async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    const fromApi = (await apiKey(admin, ['manage'])).body.data;
    const fromForm = await formKey(admin, ['manage']);
    const byKey = (
      (await (
        await manage(fromApi.key!, '/api/v1/keys', { method: 'POST', body: { name: 'by key', scopes: ['manage'] } })
      ).json()) as { data: KeyJson }
    ).data;
    const tools = (await apiKey(admin, ['tools'])).body.data;
    const keys = [fromApi.key!, fromForm.key!, byKey.key!];
    const hook = await addEndpoint(fromApi.key!, ['key.revoked']);
    // Each key's Durable Object has its state cached before the change.
    for (const key of keys) expect((await members(key)).status).toBe(200);

    const demoted = await team.owner.browser.json(`/api/v1/members/${admin.memberId}`, {
      method: 'PATCH',
      csrf: team.owner.csrf,
      body: { role: 'developer' },
    });
    expect(demoted.status).toBe(200);

    for (const key of keys) {
      const res = await members(key);
      expect(res.status).toBe(401);
      expect(((await res.json()) as ErrorJson).error).toMatchObject({
        code: 'unauthorized',
        message: expect.stringContaining('revoked'),
      });
      expect((await manage(key, '/api/v1/audit-logs')).status).toBe(401);
    }
    // The tools key belongs to the account and stays.
    expect((await call('/api/v1/categories', { headers: toolsHeaders(tools.key!) })).status).toBe(200);

    const ids = [fromApi.id, await keyIdOf(fromForm.key!), byKey.id].sort();
    const record = await lastRecord(team.accountId, 'member.role_changed');
    expect(record).toMatchObject({
      actor_id: team.owner.memberId,
      target: admin.memberId,
      details: { from: 'admin', to: 'developer', revoked_keys: ids },
    });
    const list = ((await (await team.owner.browser.json('/api/v1/keys')).json()) as { data: KeyJson[] }).data;
    expect(
      list
        .filter((k) => k.revoked_at !== null)
        .map((k) => k.id)
        .sort(),
    ).toEqual(ids);
    // Each revocation sends its key.revoked event.
    const events = await waitFor(
      async () => messages(await received(hook.path)),
      (r) => r.length >= ids.length,
    );
    expect(
      events
        .map((r) => verified(hook, r))
        .map((e) => [e.type, e.data.key_id])
        .sort(),
    ).toEqual(ids.map((id) => ['key.revoked', id]));
    // And the former admin cannot make a new one.
    expect((await apiKey(admin, ['manage'])).res.status).toBe(403);
  });

  it("removing an admin (or an admin leaving) revokes theirs; the operator's and other members' stay", async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    const other = await join(team, 'admin');
    const mine = (await apiKey(admin, ['manage'])).body.data.key!;
    const theirs = (await apiKey(other, ['manage'])).body.data.key!;
    const operator = await addKey({ key: '', id: '', accountId: team.accountId }, ['manage']);
    for (const key of [mine, theirs, operator.key]) expect((await members(key)).status).toBe(200);

    expect(
      (await team.owner.browser.json(`/api/v1/members/${admin.memberId}`, { method: 'DELETE', csrf: team.owner.csrf }))
        .status,
    ).toBe(200);
    expect((await members(mine)).status).toBe(401);
    expect((await members(theirs)).status).toBe(200);
    expect((await members(operator.key)).status).toBe(200);
    expect((await lastRecord(team.accountId, 'member.removed')).details).toMatchObject({
      revoked_keys: [await keyIdOf(mine)],
    });

    // Leaving, from the console's members page.
    const page = await other.browser.page('/members');
    expect((await other.browser.post(`/members/${other.memberId}/remove`, { _csrf: page.csrf })).status).toBe(303);
    expect((await members(theirs)).status).toBe(401);
    expect((await members(operator.key)).status).toBe(200);
  });

  it('an owner who steps down to admin keeps theirs: an admin may hold a manage key', async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    const key = (await formKey(team.owner, ['manage'])).key!;
    expect(
      (
        await team.owner.browser.json(`/api/v1/members/${admin.memberId}`, {
          method: 'PATCH',
          csrf: team.owner.csrf,
          body: { role: 'owner' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await team.owner.browser.json(`/api/v1/members/${team.owner.memberId}`, {
          method: 'PATCH',
          csrf: team.owner.csrf,
          body: { role: 'admin' },
        })
      ).status,
    ).toBe(200);
    expect((await members(key)).status).toBe(200);
    expect((await lastRecord(team.accountId, 'member.role_changed')).details).toEqual({ from: 'owner', to: 'admin' });
  });
});

describe('the keys list', () => {
  it('says who made each key, over the API and on the console page', async () => {
    const team = await enterpriseTeam();
    const dev = await join(team, 'developer');
    const devKey = (await apiKey(dev, ['image'])).body.data;
    const operator = await addKey({ key: '', id: '', accountId: team.accountId }, ['tools']);
    const list = ((await (await team.owner.browser.json('/api/v1/keys')).json()) as { data: KeyJson[] }).data;
    expect(Object.fromEntries(list.map((k) => [k.id, k.created_by]))).toEqual({
      [devKey.id]: { type: 'member', id: dev.memberId, email: dev.email },
      [operator.id]: { type: 'operator', id: null, email: null },
    });
    const viaKey = (
      (await (await manage((await apiKey(team.owner, ['manage'])).body.data.key!, '/api/v1/keys')).json()) as {
        data: KeyJson[];
      }
    ).data;
    expect(viaKey.find((k) => k.id === devKey.id)?.created_by.email).toBe(dev.email);

    const page = (await team.owner.browser.page('/keys')).html;
    const cell = (id: string) =>
      new RegExp(`data-key-id="${id}"[\\s\\S]*?data-testid="made-by">([\\s\\S]*?)</td>`).exec(page)?.[1];
    expect(cell(devKey.id)).toBe(dev.email);
    expect(cell(operator.id)).toContain('operator');
    // A maker who has left is named by id.
    expect(
      (await team.owner.browser.json(`/api/v1/members/${dev.memberId}`, { method: 'DELETE', csrf: team.owner.csrf }))
        .status,
    ).toBe(200);
    const after = ((await (await team.owner.browser.json('/api/v1/keys')).json()) as { data: KeyJson[] }).data;
    expect(after.find((k) => k.id === devKey.id)).toMatchObject({
      revoked_at: null,
      created_by: { type: 'member', id: dev.memberId, email: null },
    });
  });
});
