// An endpoint's failure streak, with the times given: five days of unbroken failures disable it; a
// failure after a quiet spell (no attempt for longer than any retry gap) starts a new streak; editing
// an enabled endpoint leaves its streak alone.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { AuditOrigin } from '../../src/audit/record.ts';
import { createEndpoint, getEndpoint, recordHealth, updateEndpoint } from '../../src/webhooks/endpoints.ts';
import { manageAccount } from './webhook-helpers.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIVE_DAYS = 5 * DAY;
const LONGEST_GAP = 10 * HOUR; // the default schedule's
const OWNER: AuditOrigin = { actor: { type: 'key', id: null }, ip: null, userAgent: null };

async function endpoint() {
  const account = await manageAccount();
  const caller = { env, accountId: account.accountId, now: Date.UTC(2026, 10, 1), origin: OWNER };
  const created = await createEndpoint(caller, { url: 'https://hooks.example.com/x', events: ['key.created'] });
  if (!created.ok) throw new Error('not created');
  return { accountId: account.accountId, id: created.endpoint.id };
}
const fail = (id: string, at: number) => recordHealth(env.DB, id, false, at, FIVE_DAYS, LONGEST_GAP);
const streakOf = async (id: string) =>
  (
    await env.DB.prepare('SELECT failing_since FROM webhook_endpoints WHERE id = ?')
      .bind(id)
      .first<{ failing_since: number | null }>()
  )?.failing_since;

describe('failure streaks', () => {
  const t0 = Date.UTC(2026, 10, 2);

  it('disable an endpoint after five days of failures no further apart than the longest retry gap', async () => {
    const { accountId, id } = await endpoint();
    let disabled = false;
    for (let at = t0; at <= t0 + FIVE_DAYS && !disabled; at += 9 * HOUR) disabled = await fail(id, at);
    expect(disabled).toBe(false); // 5 days is not yet reached at the last step below it
    expect(await fail(id, t0 + FIVE_DAYS + HOUR)).toBe(true);
    expect((await getEndpoint(env.DB, accountId, id))?.enabled).toBe(false);
  });

  it('start again after a quiet spell: one failure a week later does not disable', async () => {
    const { accountId, id } = await endpoint();
    await fail(id, t0);
    await fail(id, t0 + 5 * HOUR);
    expect(await fail(id, t0 + 7 * DAY)).toBe(false);
    expect(await streakOf(id)).toBe(t0 + 7 * DAY);
    expect((await getEndpoint(env.DB, accountId, id))?.enabled).toBe(true);
  });

  it('survive an edit of an enabled endpoint, and end when it is switched back on', async () => {
    const { accountId, id } = await endpoint();
    await fail(id, t0);
    await updateEndpoint({ env, accountId, now: t0 + HOUR, origin: OWNER }, id, { description: 'renamed' });
    expect(await streakOf(id)).toBe(t0);
    await updateEndpoint({ env, accountId, now: t0 + 2 * HOUR, origin: OWNER }, id, { enabled: false });
    await updateEndpoint({ env, accountId, now: t0 + 3 * HOUR, origin: OWNER }, id, { enabled: true });
    expect(await streakOf(id)).toBeNull();
  });
});
