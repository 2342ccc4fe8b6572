// `members invitation-link ID`: a new link for a pending invitation, printed for an operator who vouches for
// the address (where the service cannot mail it: docs/teams.md). The invitation's link is otherwise only
// ever mailed to the person invited. The new token's hash replaces the old one (whose link stops working),
// with member.invitation_renewed (actor: operator) in the same batch.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../accounts/keys.ts';
import { SQL } from '../db/statements.ts';
import { INVITATION_TOKEN_BYTES } from '../teams/limits.ts';
import { executeWithAudit } from './audit-commands.ts';
import type { Command } from './command.ts';
import { CliError, UsageError } from './errors.ts';
import { d1Execute } from './wrangler.ts';

const INVITATION_ID = /^inv_[0-9A-Za-z]{16}$/;

/** The origin of an http(s) URL, or null (as the service reads PUBLIC_URL for its mail). */
function originOf(value: string): string | null {
  try {
    const url = new URL(value.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
  } catch {
    return null;
  }
}

export const memberInvitationLink: Command = {
  group: 'members',
  name: 'invitation-link',
  synopsis: 'ID [--public-url URL]',
  flags: ['public-url'],
  positionals: ['ID'],
  prepare(input) {
    const id = input.positionals[0] as string;
    if (!INVITATION_ID.test(id))
      throw new UsageError('invitation ids look like inv_ followed by 16 letters or digits', input.usage);
    // Where people reach the service: the link's origin, as the service's own mail would have it.
    const given = input.values.get('public-url') ?? process.env.PUBLIC_URL ?? input.instance?.url;
    const origin = given === undefined ? null : originOf(given);
    if (origin === null)
      throw new UsageError(
        'give --public-url (or env PUBLIC_URL): the http(s) address people reach the service at',
        input.usage,
      );
    return async () => {
      const now = Date.now();
      const [[row] = []] = await d1Execute(input.target, [{ sql: SQL.pendingInvitation, params: [id, now] }]);
      if (row === undefined) throw new CliError(`no pending invitation ${id} (used, expired or unknown)`);
      const accountId = String(row.account_id);
      const token = randomBytes(INVITATION_TOKEN_BYTES).toString('base64url');
      const hash = await sha256Hex(token);
      const [renewed = []] = await executeWithAudit(
        input.target,
        [{ sql: `${SQL.renewInvitation} RETURNING id`, params: [hash, id, now] }],
        {
          accountId,
          action: 'member.invitation_renewed',
          target: id,
          details: { email: row.email, delivery: 'operator' },
        },
        { sql: 'EXISTS (SELECT 1 FROM invitations WHERE id = ? AND token_hash = ?)', params: [id, hash] },
      );
      if (renewed.length !== 1) throw new CliError(`no pending invitation ${id} (used, expired or unknown)`);
      return {
        output: {
          invitation: id,
          account_id: accountId,
          email: row.email,
          role: row.role,
          expires_at: new Date(Number(row.expires_at)).toISOString(),
          url: `${origin}/invitations/${token}`,
          note: 'give this link only to the person at that address: it makes them a member; any link given before no longer works',
        },
      };
    };
  },
};
