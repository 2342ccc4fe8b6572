// An invitation's link, mailed to the person invited (on PUBLIC_URL, within the per-address budget of
// account mail). The link is still in the inviter's answer too: a failed send leaves them the link to give.
import { publicLink, sendAccountMail } from '../auth/email-links.ts';
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
  const link = publicLink(env, `/invitations/${token}`);
  if (link === null) {
    console.error('mail_not_sent reason=not_configured problem="PUBLIC_URL is not an http(s) URL"');
    return false;
  }
  const account = await env.DB.prepare('SELECT name FROM accounts WHERE id = ?')
    .bind(accountId)
    .first<{ name: string }>();
  const mail = invitationMail(
    invitation.email,
    link,
    account?.name ?? 'an account',
    invitation.role,
    INVITATION_TTL_MS / 86_400_000,
  );
  return (await sendAccountMail(env, mail, now)).ok;
}
