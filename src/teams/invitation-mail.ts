// An invitation's link, mailed to the person invited (on PUBLIC_URL, within the per-address budget of
// account mail). The link is still in the inviter's answer too: a failed send leaves them the link to give.
import { sendLinkMail } from '../auth/email-links.ts';
import type { Env } from '../env.ts';
import { invitationMail } from '../mail/messages.ts';
import { INVITATION_TTL_MS } from './limits.ts';
import type { InvitationView } from './members.ts';

/** Whether the relay took the mail. */
export async function mailInvitation(
  env: Env,
  accountId: string,
  invitation: InvitationView,
  token: string,
  now: number,
): Promise<boolean> {
  const account = await env.DB.prepare('SELECT name FROM accounts WHERE id = ?')
    .bind(accountId)
    .first<{ name: string }>();
  const days = INVITATION_TTL_MS / 86_400_000;
  const compose = (link: string) =>
    invitationMail(invitation.email, link, account?.name ?? 'an account', invitation.role, days);
  return (await sendLinkMail(env, `/invitations/${token}`, undefined, compose, now)).ok;
}
