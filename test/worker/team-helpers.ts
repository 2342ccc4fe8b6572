// Teams in tests: an enterprise account's owner (signed up in the console), and members of each role
// who joined through an invitation link, each in a browser of their own.
import { env } from 'cloudflare:test';
import { expect } from 'vitest';
import type { Role } from '../../src/teams/roles.ts';
import { Browser, PASSWORD, signedUp, uniqueEmail } from './console-helpers.ts';
import { linkIn, mailsTo } from './mail-helpers.ts';

export interface Person {
  browser: Browser;
  csrf: string;
  email: string;
  memberId: string;
  role: Role;
}

export interface Team {
  accountId: string;
  owner: Person;
}

export async function enterpriseTeam(
  tier: 'enterprise' | 'developer' | 'free' = 'enterprise',
  ownerEmail?: string,
): Promise<Team> {
  const { browser, csrf, email } = await signedUp(ownerEmail ? { email: ownerEmail } : {});
  const row = await env.DB.prepare(
    'SELECT a.id AS account_id, m.id AS member_id FROM accounts a JOIN members m ON m.account_id = a.id WHERE a.email = ?',
  )
    .bind(email)
    .first<{ account_id: string; member_id: string }>();
  await env.DB.prepare('UPDATE accounts SET tools_tier = ? WHERE id = ?').bind(tier, row!.account_id).run();
  return { accountId: row!.account_id, owner: { browser, csrf, email, memberId: row!.member_id, role: 'owner' } };
}

/** The owner invites over the API; the invitee opens the link in a fresh browser and joins. */
export async function join(team: Team, role: Role, by: Person = team.owner, email = uniqueEmail()): Promise<Person> {
  const res = await by.browser.json('/api/v1/members/invitations', {
    method: 'POST',
    csrf: by.csrf,
    body: { email, role },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const { mailed } = ((await res.json()) as { data: { mailed: boolean } }).data;
  expect(mailed).toBe(true);
  const browser = new Browser();
  const path = await invitationPath(email);
  const form = await browser.page(path);
  expect(form.res.status).toBe(200);
  const joined = await browser.post(path, { _csrf: form.csrf, name: `A ${role}`, password: PASSWORD });
  expect(joined.status, await joined.clone().text()).toBe(303);
  const home = await browser.page('/');
  const member = await env.DB.prepare('SELECT id FROM members WHERE email = ?').bind(email).first<{ id: string }>();
  return { browser, csrf: home.csrf, email, memberId: member!.id, role };
}

/** The path of the newest invitation link mailed to `email` (the link goes to the invited mailbox only). */
export async function invitationPath(email: string, count = 1): Promise<string> {
  const mails = await mailsTo(email, count);
  const mail = mails[mails.length - 1];
  if (!mail) throw new Error(`no invitation mail to ${email}`);
  return new URL(linkIn(mail, '/invitations/')).pathname;
}
