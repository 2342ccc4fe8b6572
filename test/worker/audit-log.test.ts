// The audit log: one record per change and sign-in, written with the change, chained by hashes, read
// and exported over the API, and impossible to change (no endpoint writes it; D1 refuses UPDATE/DELETE).
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, verifyChain, type AuditRow } from '../../src/audit/chain.ts';
import type { AuditRecord } from '../../src/audit/query.ts';
import { AUDIT_RETENTION_DAYS } from '../../src/audit/limits.ts';
import { sweepAuditLog } from '../../src/audit/retention.ts';
import selfhosted from '../../src/selfhost/worker.ts';
import { call } from './helpers.ts';
import { Browser, PASSWORD, signedUp } from './console-helpers.ts';
import { hookPath, manage, manageAccount, RECEIVER } from './webhook-helpers.ts';

interface Page {
  data: AuditRecord[];
  meta: { next_cursor: string | null };
}

const asRow = (r: AuditRecord, accountId: string): AuditRow & { hash: string } => ({
  id: r.id,
  account_id: accountId,
  time: Date.parse(r.time),
  actor_type: r.actor.type,
  actor_id: r.actor.id,
  action: r.action,
  target: r.target,
  ip: r.ip,
  user_agent: r.user_agent,
  result: r.result,
  details: r.details === null ? null : JSON.stringify(r.details),
  prev_hash: r.prev_hash,
  hash: r.hash,
});

async function exportNdjson(key: string, query = ''): Promise<AuditRecord[]> {
  const res = await manage(key, `/api/v1/audit-logs/export?format=ndjson${query}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/x-ndjson');
  return new TextDecoder()
    .decode(await res.arrayBuffer())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditRecord);
}

describe('the audit log', () => {
  it('records key.created, key.revoked and webhook.created in order, chained, with who and from where', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    const created = await call('/api/v1/keys', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${account.key}`,
        'Content-Type': 'application/json',
        'User-Agent': 'audit-test/1.0',
        'CF-Connecting-IP': '198.51.100.7',
      },
      body: JSON.stringify({ name: 'ci', scopes: ['image'] }),
    });
    expect(created.status).toBe(201);
    const key = ((await created.json()) as { data: { id: string } }).data;
    expect((await manage(account.key, `/api/v1/keys/${key.id}`, { method: 'DELETE' })).status).toBe(200);
    // Revoking again changes nothing, so it writes nothing.
    expect((await manage(account.key, `/api/v1/keys/${key.id}`, { method: 'DELETE' })).status).toBe(200);
    const hook = await manage(account.key, '/api/v1/webhooks', {
      method: 'POST',
      body: { url: `${RECEIVER}${hookPath()}`, events: ['key.created'] },
    });
    expect(hook.status).toBe(201);
    const endpoint = ((await hook.json()) as { data: { id: string } }).data;

    const records = await exportNdjson(account.key);
    expect(records.map((r) => [r.action, r.target])).toEqual([
      ['key.created', key.id],
      ['key.revoked', key.id],
      ['webhook.created', endpoint.id],
    ]);
    expect(records[0]).toMatchObject({
      actor: { type: 'key', id: account.id },
      ip: '198.51.100.7',
      user_agent: 'audit-test/1.0',
      result: 'success',
      details: { name: 'ci', scopes: ['image'] },
    });
    expect(records[0]!.prev_hash).toBe(GENESIS_HASH);
    expect(await verifyChain(records.map((r) => asRow(r, account.accountId)))).toBeNull();

    // The list is newest first, paged by cursor, and agrees with the export.
    const first = (await (await manage(account.key, '/api/v1/audit-logs?limit=2')).json()) as Page;
    expect(first.data.map((r) => r.action)).toEqual(['webhook.created', 'key.revoked']);
    expect(first.meta.next_cursor).not.toBeNull();
    const second = (await (
      await manage(account.key, `/api/v1/audit-logs?limit=2&cursor=${first.meta.next_cursor}`)
    ).json()) as Page;
    expect(second.data.map((r) => r.action)).toEqual(['key.created']);
    expect(second.meta.next_cursor).toBeNull();
    expect([...first.data, ...second.data].reverse()).toEqual(records);
  });

  it('filters by action, actor and time', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    for (const name of ['a', 'b'])
      await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name, scopes: ['tools'] } });
    const list = async (q: string) =>
      ((await (await manage(account.key, `/api/v1/audit-logs?${q}`)).json()) as Page).data;
    expect((await list('action=key.created')).length).toBe(2);
    expect((await list('action=key.revoked')).length).toBe(0);
    expect((await list(`actor=${account.id}`)).length).toBe(2);
    expect((await list('actor=operator')).length).toBe(0);
    expect((await list('since=2999-01-01T00:00:00Z')).length).toBe(0);
    expect((await list('until=2999-01-01T00:00:00Z')).length).toBe(2);
    for (const bad of ['since=yesterday', 'action=DROP TABLE', 'limit=0', 'limit=201', 'cursor=abc', 'nope=1']) {
      const res = await manage(account.key, `/api/v1/audit-logs?${bad}`);
      expect(res.status, bad).toBe(400);
    }
  });

  it('exports CSV with a header row and one line per record', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    await manage(account.key, '/api/v1/keys', {
      method: 'POST',
      body: { name: 'with "quotes", commas', scopes: ['tools'] },
    });
    const res = await manage(account.key, '/api/v1/audit-logs/export?format=csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    expect(res.headers.get('content-disposition')).toContain('audit-log.csv');
    const lines = (await res.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,time,actor_type,actor_id,action,target,ip,user_agent,result,details,prev_hash,hash');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(',key.created,');
    expect(lines[1]).toContain('"{""name"":""with \\""quotes\\"", commas""');
    expect((await manage(account.key, '/api/v1/audit-logs/export?format=xml')).status).toBe(400);
  });

  it('records console sign-ins and failed sign-ins', async () => {
    const { email, browser } = await signedUp();
    const accountId = (await env.DB.prepare('SELECT id FROM accounts WHERE email = ?')
      .bind(email)
      .first<{ id: string }>())!.id;
    const stranger = new Browser();
    const form = await stranger.page('/signin');
    expect((await stranger.post('/signin', { _csrf: form.csrf, email, password: 'wrong password!' })).status).toBe(401);
    const again = await stranger.page('/signin');
    expect((await stranger.post('/signin', { _csrf: again.csrf, email, password: PASSWORD })).status).toBe(303);
    const rows = await env.DB.prepare(
      'SELECT action, result, actor_type, ip FROM audit_logs WHERE account_id = ? ORDER BY seq',
    )
      .bind(accountId)
      .all();
    expect(rows.results).toEqual([
      { action: 'member.email_verified', result: 'success', actor_type: 'member', ip: browser.ip },
      { action: 'session.signed_in', result: 'success', actor_type: 'member', ip: browser.ip },
      { action: 'session.sign_in_failed', result: 'failure', actor_type: 'anonymous', ip: stranger.ip },
      { action: 'session.signed_in', result: 'success', actor_type: 'member', ip: stranger.ip },
    ]);
  });

  it('is for enterprise accounts only', async () => {
    const account = await manageAccount({ tools: 'developer' });
    const res = await manage(account.key, '/api/v1/audit-logs');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('plan_upgrade_required');
    expect((await manage(account.key, '/api/v1/audit-logs/export?format=csv')).status).toBe(403);
    expect((await call('/api/v1/audit-logs')).status).toBe(401);
  });

  it('cannot be changed: no endpoint writes it, and D1 refuses updates and deletes', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name: 'x', scopes: ['tools'] } });
    const [record] = ((await (await manage(account.key, '/api/v1/audit-logs')).json()) as Page).data;
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const path of ['/api/v1/audit-logs', `/api/v1/audit-logs/${record!.id}`, '/api/v1/audit-logs/export']) {
        const res = await manage(account.key, path, {
          method,
          body: method === 'DELETE' ? undefined : { action: 'nothing' },
        });
        expect([404, 405], `${method} ${path}`).toContain(res.status);
      }
    }
    await expect(
      env.DB.prepare("UPDATE audit_logs SET action = 'key.revoked' WHERE id = ?").bind(record!.id).run(),
    ).rejects.toThrow(/append-only/);
    await expect(env.DB.prepare('DELETE FROM audit_logs WHERE id = ?').bind(record!.id).run()).rejects.toThrow(
      /append-only/,
    );
    const after = ((await (await manage(account.key, '/api/v1/audit-logs')).json()) as Page).data;
    expect(after).toEqual([record]);
  });

  it('keeps records 400 days: the retention sweep deletes older ones only', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name: 'young', scopes: ['tools'] } });
    const old = Date.now() - (AUDIT_RETENTION_DAYS + 1) * 86_400_000;
    await env.DB.prepare(
      "INSERT INTO audit_logs (id, account_id, time, actor_type, action, result, prev_hash, hash) VALUES (?, ?, ?, 'operator', 'account.tier_changed', 'success', ?, ?)",
    )
      .bind(`aud_old${crypto.randomUUID().slice(0, 8)}`, account.accountId, old, `old-${account.accountId}`, 'x')
      .run();
    const count = async () =>
      (await env.DB.prepare('SELECT COUNT(*) AS n FROM audit_logs WHERE account_id = ?')
        .bind(account.accountId)
        .first<{ n: number }>())!.n;
    expect(await count()).toBe(2);
    expect(await sweepAuditLog(env.DB, Date.now())).toBeGreaterThanOrEqual(1);
    expect(await count()).toBe(1);
    const [kept] = ((await (await manage(account.key, '/api/v1/audit-logs')).json()) as Page).data;
    expect(kept!.action).toBe('key.created');
  });

  it('is swept on a self-hosted server too, where no cron trigger fires: a request runs the scheduled jobs', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    const old = Date.now() - (AUDIT_RETENTION_DAYS + 1) * 86_400_000;
    const id = `aud_old${crypto.randomUUID().slice(0, 8)}`;
    await env.DB.prepare(
      "INSERT INTO audit_logs (id, account_id, time, actor_type, action, result, prev_hash, hash) VALUES (?, ?, ?, 'operator', 'account.tier_changed', 'success', ?, ?)",
    )
      .bind(id, account.accountId, old, `old-${account.accountId}`, 'x')
      .run();
    const ctx = createExecutionContext();
    const res = await selfhosted.fetch(new Request('https://api.shrinkray.test/healthz'), env, ctx);
    expect(res.status).toBe(200);
    const sweep = await selfhosted.fetch(new Request('https://api.shrinkray.test/v1/nothing-here'), env, ctx);
    expect(sweep.status).toBe(404);
    await waitOnExecutionContext(ctx);
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM audit_logs WHERE id = ?')
      .bind(id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it('shows tampering: an edited field or a missing record breaks the chain', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    for (const name of ['a', 'b', 'c'])
      await manage(account.key, '/api/v1/keys', { method: 'POST', body: { name, scopes: ['tools'] } });
    const rows = (await exportNdjson(account.key)).map((r) => asRow(r, account.accountId));
    expect(await verifyChain(rows)).toBeNull();
    expect(await verifyChain(rows.map((r, i) => (i === 1 ? { ...r, target: 'key_someoneelse00000' } : r)))).toEqual({
      index: 1,
      id: rows[1]!.id,
      reason: 'hash',
    });
    expect(await verifyChain([rows[0]!, rows[2]!])).toEqual({ index: 1, id: rows[2]!.id, reason: 'link' });
  });

  it('keeps one chain under concurrent changes (no fork, no lost record)', async () => {
    const account = await manageAccount({ tools: 'enterprise' });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => `k${i}`).map((name) =>
        manage(account.key, '/api/v1/keys', { method: 'POST', body: { name, scopes: ['tools'] } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    const rows = (await exportNdjson(account.key)).map((r) => asRow(r, account.accountId));
    expect(rows).toHaveLength(12);
    expect(await verifyChain(rows)).toBeNull();
  });
});
