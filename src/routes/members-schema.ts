// Schemas of the members endpoints: one set validates and documents.
import { EMAIL_PATTERN } from '../auth/credentials.ts';
import { z } from '@hono/zod-openapi';
import { EMAIL_MAX_LENGTH } from '../auth/limits.ts';
import { ROLES } from '../teams/roles.ts';

const Meta = z.object({ request_id: z.string() });

export const Member = z
  .object({
    id: z.string().openapi({ example: 'mem_9fJ2kQ9xLm0PzR7a' }),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    sign_in: z.array(z.enum(['password', 'sso'])).openapi({ description: 'How the member signs in' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Member');

export const Invitation = z
  .object({
    id: z.string().openapi({ example: 'inv_2kQ9xLm0PzR7a9fJ' }),
    email: z.string(),
    role: z.enum(ROLES),
    created_at: z.string().openapi({ format: 'date-time' }),
    expires_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Invitation');

export const MemberList = z
  .object({
    data: z.array(Member),
    invitations: z.array(Invitation).openapi({ description: 'Pending invitations (not yet accepted, not expired)' }),
    meta: Meta.extend({ total: z.number().int() }),
  })
  .openapi('MemberList');
export const MemberOne = z.object({ data: Member, meta: Meta }).openapi('MemberOne');
/** An invitation and what became of the mail with its link (the link itself goes to the invited mailbox only). */
const MailedInvitation = Invitation.extend({
  mailed: z.boolean().openapi({ description: 'Whether the mail with the link went out to the email invited' }),
  mail: z.enum(['sent', 'not_sent', 'not_configured']).openapi({
    description:
      'sent: the relay took the mail; not_sent: it failed (send again later); not_configured: this service has no mail, so an operator who vouches for the address prints a link (`npm run admin -- members invitation-link <id>`)',
  }),
});

export const CreatedInvitation = z.object({ data: MailedInvitation, meta: Meta }).openapi('CreatedInvitation');
export const SentInvitation = z.object({ data: MailedInvitation, meta: Meta }).openapi('SentInvitation');

export const InvitationIdParam = z.object({
  id: z
    .string()
    .regex(/^inv_[0-9A-Za-z]{16}$/, { error: 'must be an invitation id (inv_ and 16 letters or digits)' })
    .openapi({ param: { name: 'id', in: 'path' }, example: 'inv_2kQ9xLm0PzR7a9fJ' }),
});

export const InviteBody = z
  .object({
    email: z
      .string({ error: 'must be a string' })
      .trim()
      .max(EMAIL_MAX_LENGTH, { error: `must be at most ${EMAIL_MAX_LENGTH} characters` })
      .regex(EMAIL_PATTERN, { error: 'must be an email address like name@example.com' }),
    role: z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }),
  })
  .strict()
  .openapi('InviteMember');

export const PatchMemberBody = z
  .object({ role: z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }) })
  .strict()
  .openapi('ChangeMemberRole');

export const MemberIdParam = z.object({
  id: z
    .string()
    .regex(/^mem_[0-9A-Za-z]{16}$/, { error: 'must be a member id (mem_ and 16 letters or digits)' })
    .openapi({ param: { name: 'id', in: 'path' }, example: 'mem_9fJ2kQ9xLm0PzR7a' }),
});
