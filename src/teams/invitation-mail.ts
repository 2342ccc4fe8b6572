// An invitation's link, mailed to the person invited (on PUBLIC_URL, within the per-address budget of
// account mail), and only to them: the inviter learns whether it went out, never the link, since the link is
// what proves the invitee reads mail at the address. Where mail is not configured, an operator who vouches
// for the address prints a link (`npm run admin -- members invitation-link`).
import { sendLinkMail } from '../auth/email-links.ts';
import type { Env } from '../env.ts';
import { mailConfig } from '../mail/config.ts';
import { invitationMail } from '../mail/messages.ts';
import { INVITATION_TTL_MS } from './limits.ts';
import type { InvitationView } from './members.ts';

/** What became of the mail: sent (to the relay), not sent (the relay failed: "send again"), or mail is off. */
export type InvitationDelivery = 'sent' | 'not_sent' | 'not_configured';

/** Why mail cannot go out at all (null: it can), before any link is made or renewed. */
export function mailOff(env: Env): string | null {
  const config = mailConfig(env);
  return config.ok ? null : config.problem;
}

/** The operator's command that prints a link for an invitation when mail is off. */
export const operatorLinkCommand = (invitationId: string): string =>
  `npm run admin -- members invitation-link ${invitationId}`;

export async function mailInvitation(
  env: Env,
  accountId: string,
  invitation: InvitationView,
  token: string,
  now: number,
): Promise<InvitationDelivery> {
  if (mailOff(env) !== null) return 'not_configured';
  const account = await env.DB.prepare('SELECT name FROM accounts WHERE id = ?')
    .bind(accountId)
    .first<{ name: string }>();
  const days = INVITATION_TTL_MS / 86_400_000;
  const compose = (link: string) =>
    invitationMail(invitation.email, link, account?.name ?? 'an account', invitation.role, days);
  const sent = await sendLinkMail(env, `/invitations/${token}`, undefined, compose, now);
  if (sent.ok) return 'sent';
  return sent.reason === 'not_configured' ? 'not_configured' : 'not_sent';
}
