// Migration 0008 on keys that existed before keys recorded their maker: each key's maker comes from its
// key.created audit record (through the chain of manage keys that made manage keys), and every manage key
// whose maker is unknown, gone or below admin is revoked, so no developer keeps a key that acts as admin.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { keyStatement } from '../../src/accounts/provision.ts';
import type { Scope } from '../../src/accounts/tiers.ts';
import { appendAudit, OPERATOR, type AuditActor } from '../../src/audit/log.ts';
import { KEY_STATE_TTL_MS } from '../../src/metering/key-state.ts';
import { bearer, call, TestClock } from './helpers.ts';
import { enterpriseTeam, join } from './team-helpers.ts';
import { manage } from './webhook-helpers.ts';

/** The migration's statements after its schema change: the backfill and the revocation. */
function backfill(): string[] {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0008_'));
  if (!migration) throw new Error('migration 0008 not found');
  const code = (q: string) => q.replace(/^\s*--.*$/gm, '').trim();
  return migration.queries.filter((q) => !/^(ALTER|CREATE)\b/i.test(code(q)));
}

describe('migration 0008 (key makers)', () => {
  it("names existing keys' makers from the audit log and revokes the manage keys that would hold more than their maker", async () => {
    const team = await enterpriseTeam();
    const admin = await join(team, 'admin');
    const dev = await join(team, 'developer');
    const now = Date.now();
    // A key as it was before the migration: no maker recorded; its key.created record names the actor.
    const old = async (scopes: Scope[], actor: AuditActor | null) => {
      const made = await keyStatement({ accountId: team.accountId, scopes, name: 'old' }, now);
      await env.DB.prepare(made.statement.sql)
        .bind(...made.statement.params)
        .run();
      await env.DB.prepare('UPDATE api_keys SET created_by = NULL WHERE id = ?').bind(made.record.id).run();
      if (actor)
        await appendAudit(
          env.DB,
          { ...OPERATOR, actor },
          { accountId: team.accountId, action: 'key.created', target: made.record.id },
          now,
        );
      return made.record;
    };
    const member = (id: string): AuditActor => ({ type: 'member', id });
    const byAdmin = await old(['manage'], member(admin.memberId));
    const byDev = await old(['manage'], member(dev.memberId));
    const byAdminsKey = await old(['manage'], { type: 'key', id: byAdmin.id });
    const byDevsKey = await old(['manage'], { type: 'key', id: byDev.id });
    const byOperator = await old(['manage'], OPERATOR.actor);
    const byLeaver = await old(['manage'], member('mem_0000000000000000'));
    const unknown = await old(['manage'], null);
    const devsTools = await old(['tools'], member(dev.memberId));
    const unknownImage = await old(['image'], null);
    // Warm one of the keys to be revoked: its Durable Object re-reads D1 within a minute.
    expect((await manage(byDev.key, '/api/v1/members')).status).toBe(200);

    for (const sql of backfill()) await env.DB.prepare(sql).run();

    const rows = await env.DB.prepare('SELECT id, created_by, revoked_at FROM api_keys WHERE account_id = ?')
      .bind(team.accountId)
      .all<{ id: string; created_by: string | null; revoked_at: number | null }>();
    const state = Object.fromEntries(
      rows.results.map((r) => [r.id, [r.created_by, r.revoked_at === null ? 'active' : 'revoked']]),
    );
    expect(state).toEqual({
      [byAdmin.id]: [admin.memberId, 'active'],
      [byAdminsKey.id]: [admin.memberId, 'active'],
      [byOperator.id]: ['operator', 'active'],
      [byDev.id]: [dev.memberId, 'revoked'],
      [byDevsKey.id]: [dev.memberId, 'revoked'],
      [byLeaver.id]: ['mem_0000000000000000', 'revoked'],
      [unknown.id]: [null, 'revoked'],
      [devsTools.id]: [dev.memberId, 'active'],
      [unknownImage.id]: [null, 'active'],
    });
    // Keys not yet cached by their Durable Object are refused at once; the warm one after its state's TTL.
    expect((await manage(unknown.key, '/api/v1/members')).status).toBe(401);
    expect((await manage(byAdminsKey.key, '/api/v1/members')).status).toBe(200);
    const later = new TestClock(Date.now() + KEY_STATE_TTL_MS);
    expect((await call('/api/v1/members', { headers: bearer(byDev.key), clock: later })).status).toBe(401);
  });
});
