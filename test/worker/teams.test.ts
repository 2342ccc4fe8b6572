// Teams: existing accounts' people are owners; invitations are single-use links that expire in 7 days;
// the last owner can neither leave nor be demoted; each change is in the audit log.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { INVITATION_TTL_MS } from '../../src/teams/limits.ts';
import { call, makeKey, TestClock, toolsHeaders } from './helpers.ts';
import { Browser, PASSWORD, uniqueEmail } from './console-helpers.ts';
import { enterpriseTeam, invitationPath, join } from './team-helpers.ts';
import { inbox } from './mail-helpers.ts';
import { manage } from './webhook-helpers.ts';

interface MemberJson {
  id: string;
  email: string;
  role: string;
  sign_in: string[];
}

describe('members', () => {
  it('every account has its person as owner, whether made by sign-up or by the operator', async () => {
    const team = await enterpriseTeam();
    const list = await team.owner.browser.json('/api/v1/members');
    expect(list.status).toBe(200);
    const body = (await list.json()) as { data: MemberJson[]; invitations: unknown[] };
    expect(body.data).toEqual([
      expect.objectContaining({
        id: team.owner.memberId,
        email: team.owner.email,
        role: 'owner',
        sign_in: ['password'],
      }),
    ]);
    const operatorMade = await makeKey({ tools: 'enterprise', scopes: ['manage'] });
    const viaKey = (await (await manage(operatorMade.key, '/api/v1/members')).json()) as { data: MemberJson[] };
    expect(viaKey.data).toHaveLength(1);
    expect(viaKey.data[0]).toMatchObject({ role: 'owner', sign_in: [] });
  });

  it('invites with a single-use link; the invitee joins with the role and signs in with their password', async () => {
    const team = await enterpriseTeam();
    const dev = await join(team, 'developer');
    const page = await dev.browser.page('/members');
    expect(page.res.status).toBe(200);
    expect(page.html).toContain(dev.email);
    // The link works once.
    const again = await team.owner.browser.json('/api/v1/members');
    expect(((await again.json()) as { data: MemberJson[] }).data.map((m) => m.role)).toEqual(['owner', 'developer']);
    // Signing in later with the chosen password.
    const later = new Browser();
    const form = await later.page('/signin');
    expect((await later.post('/signin', { _csrf: form.csrf, email: dev.email, password: PASSWORD })).status).toBe(303);
  });

  it('the link goes to the invited mailbox only: neither the answer nor the page carries it; "send again" mails a new one', async () => {
    const team = await enterpriseTeam();
    const email = uniqueEmail();
    const res = await team.owner.browser.json('/api/v1/members/invitations', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { email, role: 'developer' },
    });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toMatch(/invitations\/[\w-]{43}/);
    const { data } = JSON.parse(text) as { data: Record<string, unknown> };
    expect(data).not.toHaveProperty('url');
    expect(data).toMatchObject({ email, role: 'developer', mailed: true, mail: 'sent' });
    const first = await invitationPath(email);

    // The console's form alike: it says where the link went, and shows no link.
    const other = uniqueEmail();
    const form = await team.owner.browser.page('/members');
    const made = await team.owner.browser.post('/members/invitations', {
      _csrf: form.csrf,
      email: other,
      role: 'viewer',
    });
    expect(made.status).toBe(200);
    const page = await made.text();
    expect(page).not.toMatch(/invitations\/[\w-]{43}/);
    expect(page).toContain(`We mailed the invitation link to ${other}`);
    expect(await invitationPath(other)).toMatch(/^\/invitations\/[\w-]{43}$/);

    // "Send again" (API and console): a new link in a new mail; the one before stops working.
    const id = data.id as string;
    const again = await team.owner.browser.json(`/api/v1/members/invitations/${id}/send`, {
      method: 'POST',
      csrf: team.owner.csrf,
    });
    expect(again.status).toBe(200);
    const resent = (await again.json()) as { data: Record<string, unknown> };
    expect(resent.data).not.toHaveProperty('url');
    expect(resent.data).toMatchObject({ id, email, mailed: true, mail: 'sent' });
    const second = await invitationPath(email, 2);
    expect(second).not.toBe(first);
    expect((await new Browser().page(first)).res.status).toBe(404);
    const listed = await team.owner.browser.page('/members');
    expect(listed.html).toContain(`action="/members/invitations/${id}/send"`);
    const third = await team.owner.browser.post(`/members/invitations/${id}/send`, { _csrf: listed.csrf });
    expect(third.status).toBe(200);
    expect(await third.text()).toContain(`We mailed a new invitation link to ${email}`);
    const path = await invitationPath(email, 3);
    expect((await new Browser().page(second)).res.status).toBe(404);
    // The mailbox's link works.
    const invitee = new Browser();
    const join = await invitee.page(path);
    expect(join.res.status).toBe(200);
    expect((await invitee.post(path, { _csrf: join.csrf, name: 'Invitee', password: PASSWORD })).status).toBe(303);
    // Unknown or used: 404.
    const used = await team.owner.browser.json(`/api/v1/members/invitations/${id}/send`, {
      method: 'POST',
      csrf: team.owner.csrf,
    });
    expect(used.status).toBe(404);
  });

  it('where mail is not configured, inviting says so (and how an operator can give a link); nothing is mailed', async () => {
    const team = await enterpriseTeam();
    team.owner.browser.env = { SMTP_HOST: '' };
    const later = uniqueEmail();
    const off = await team.owner.browser.json('/api/v1/members/invitations', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { email: later, role: 'viewer' },
    });
    expect(off.status).toBe(201);
    const { data } = (await off.json()) as { data: Record<string, unknown> };
    expect(data).toMatchObject({ email: later, mailed: false, mail: 'not_configured' });
    expect(data).not.toHaveProperty('url');
    const resend = await team.owner.browser.json(`/api/v1/members/invitations/${data.id as string}/send`, {
      method: 'POST',
      csrf: team.owner.csrf,
    });
    expect(resend.status).toBe(400);
    expect(((await resend.json()) as { error: { message: string } }).error.message).toContain(
      'npm run admin -- members invitation-link',
    );
    const form = await team.owner.browser.page('/members');
    const page = await team.owner.browser.post('/members/invitations', {
      _csrf: form.csrf,
      email: uniqueEmail(),
      role: 'viewer',
    });
    const html = await page.text();
    expect(html).toContain('Mail is not configured on this service');
    expect(html).toContain('npm run admin -- members invitation-link inv_');
    expect(html).not.toMatch(/invitations\/[\w-]{43}/);
    expect(await inbox(later)).toHaveLength(0);
  });

  it('refuses a used, an expired or an unknown link', async () => {
    const clock = new TestClock(Date.now());
    const team = await enterpriseTeam();
    team.owner.browser.clock = clock;
    const email = uniqueEmail();
    const res = await team.owner.browser.json('/api/v1/members/invitations', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { email, role: 'viewer' },
    });
    const invitation = ((await res.json()) as { data: { expires_at: string } }).data;
    expect(Date.parse(invitation.expires_at) - clock.now).toBe(INVITATION_TTL_MS);
    const path = await invitationPath(email);
    const late = new Browser(clock);
    clock.advance(INVITATION_TTL_MS + 1);
    expect((await late.page(path)).res.status).toBe(404);
    expect((await new Browser().page('/invitations/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).res.status).toBe(404);
    // Used: the second acceptance of a fresh link finds it gone.
    const viewer = await join(team, 'viewer');
    expect(viewer.role).toBe('viewer');
    const dupe = await team.owner.browser.json('/api/v1/members/invitations', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { email: viewer.email, role: 'admin' },
    });
    expect(dupe.status).toBe(400);
  });

  it('a link accepted twice at once makes one member', async () => {
    const team = await enterpriseTeam();
    const email = uniqueEmail();
    const res = await team.owner.browser.json('/api/v1/members/invitations', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { email, role: 'viewer' },
    });
    expect(res.status).toBe(201);
    const path = await invitationPath(email);
    const browsers = [new Browser(), new Browser()];
    const forms = await Promise.all(browsers.map((b) => b.page(path)));
    const results = await Promise.all(
      browsers.map((b, i) => b.post(path, { _csrf: forms[i]!.csrf, name: `P${i}`, password: PASSWORD })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([303, 404]);
    const count = await env.DB.prepare('SELECT COUNT(*) AS n FROM members WHERE account_id = ?')
      .bind(team.accountId)
      .first<{ n: number }>();
    expect(count!.n).toBe(2);
  });

  it('changes roles; the last owner can neither be demoted nor leave; only owners touch owners', async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    const dev = await join(team, 'developer');
    const patch = (by: typeof admin, id: string, role: string) =>
      by.browser.json(`/api/v1/members/${id}`, { method: 'PATCH', csrf: by.csrf, body: { role } });
    expect((await patch(admin, dev.memberId, 'viewer')).status).toBe(200);
    const lastOwner = await patch(team.owner, team.owner.memberId, 'admin');
    expect(lastOwner.status).toBe(400);
    expect(((await lastOwner.json()) as { error: { message: string } }).error.message).toContain('last owner');
    const leave = await team.owner.browser.json(`/api/v1/members/${team.owner.memberId}`, {
      method: 'DELETE',
      csrf: team.owner.csrf,
    });
    expect(leave.status).toBe(400);
    // An admin cannot make owners or touch one.
    expect((await patch(admin, dev.memberId, 'owner')).status).toBe(403);
    expect((await patch(admin, team.owner.memberId, 'viewer')).status).toBe(403);
    // With a second owner, the first may step down.
    expect((await patch(team.owner, admin.memberId, 'owner')).status).toBe(200);
    expect((await patch(team.owner, team.owner.memberId, 'developer')).status).toBe(200);
    // A role change takes effect at the next request: the former owner can no longer manage members.
    expect((await patch(team.owner, dev.memberId, 'admin')).status).toBe(403);
  });

  it('removing a member ends their sessions; any member may leave', async () => {
    const team = await enterpriseTeam();
    const viewer = await join(team, 'viewer');
    const dev = await join(team, 'developer');
    expect(
      (await team.owner.browser.json(`/api/v1/members/${viewer.memberId}`, { method: 'DELETE', csrf: team.owner.csrf }))
        .status,
    ).toBe(200);
    expect((await viewer.browser.fetch('/keys')).status).toBe(303);
    // A developer cannot remove others, but can leave.
    expect(
      (await dev.browser.json(`/api/v1/members/${team.owner.memberId}`, { method: 'DELETE', csrf: dev.csrf })).status,
    ).toBe(403);
    const page = await dev.browser.page('/members');
    expect((await dev.browser.post(`/members/${dev.memberId}/remove`, { _csrf: page.csrf })).status).toBe(303);
    expect((await dev.browser.fetch('/keys')).status).toBe(303);
  });

  it('writes member.invited, member.joined, member.role_changed and member.removed, chained', async () => {
    const team = await enterpriseTeam();
    const viewer = await join(team, 'viewer');
    await team.owner.browser.json(`/api/v1/members/${viewer.memberId}`, {
      method: 'PATCH',
      csrf: team.owner.csrf,
      body: { role: 'developer' },
    });
    await team.owner.browser.json(`/api/v1/members/${viewer.memberId}`, { method: 'DELETE', csrf: team.owner.csrf });
    const res = await team.owner.browser.json('/api/v1/audit-logs/export?format=ndjson');
    const records = new TextDecoder()
      .decode(await res.arrayBuffer())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; actor: { id: string }; target: string; details: unknown });
    expect(records.map((r) => r.action)).toEqual([
      'member.email_verified',
      'session.signed_in',
      'member.invited',
      'member.joined',
      'session.signed_in',
      'member.role_changed',
      'member.removed',
    ]);
    expect(records[3]).toMatchObject({ actor: { id: viewer.memberId }, target: viewer.memberId });
    expect(records[5]).toMatchObject({
      actor: { id: team.owner.memberId },
      details: { from: 'viewer', to: 'developer' },
    });
  });

  it('only owners see the billing tiers and may delete the account: everything goes, the audit log stays', async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    expect((await admin.browser.fetch('/account')).status).toBe(403);
    const page = await team.owner.browser.page('/account');
    expect(page.res.status).toBe(200);
    expect(page.html).toContain('data-testid="tools-tier">enterprise<');
    const created = await team.owner.browser.json('/api/v1/keys', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { name: 'doomed', scopes: ['tools'] },
    });
    const key = ((await created.json()) as { data: { key: string } }).data.key;
    expect((await call('/api/v1/categories', { headers: toolsHeaders(key) })).status).toBe(200);
    expect(
      (await team.owner.browser.post('/account/delete', { _csrf: page.csrf, confirm: 'not the name' })).status,
    ).toBe(400);
    const name = (await env.DB.prepare('SELECT name FROM accounts WHERE id = ?')
      .bind(team.accountId)
      .first<{ name: string }>())!.name;
    expect((await team.owner.browser.post('/account/delete', { _csrf: page.csrf, confirm: name })).status).toBe(303);
    expect(await env.DB.prepare('SELECT 1 FROM accounts WHERE id = ?').bind(team.accountId).first()).toBeNull();
    expect((await call('/api/v1/categories', { headers: toolsHeaders(key) })).status).toBe(401);
    expect((await admin.browser.fetch('/keys')).status).toBe(303);
    const last = await env.DB.prepare(
      'SELECT action, actor_id FROM audit_logs WHERE account_id = ? ORDER BY seq DESC LIMIT 1',
    )
      .bind(team.accountId)
      .first();
    expect(last).toEqual({ action: 'account.deleted', actor_id: team.owner.memberId });
    // The email is free again.
    expect(
      (await env.DB.prepare('SELECT COUNT(*) AS n FROM members WHERE email = ?')
        .bind(team.owner.email)
        .first<{ n: number }>())!.n,
    ).toBe(0);
  });

  it('members, invitations and changes need the enterprise tier', async () => {
    const team = await enterpriseTeam('developer');
    const res = await team.owner.browser.json('/api/v1/members/invitations', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { email: uniqueEmail(), role: 'viewer' },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('plan_upgrade_required');
    expect((await team.owner.browser.page('/members')).html).toContain('enterprise tools tier');
  });
});
