// Members over the management API: list, invite (the link is mailed to the invitee only), send an
// invitation again, change a role, remove.
// A manage key or the console session (accountAuth); roles checked by `requires` (src/routes/requires.ts);
// enterprise tools tier. The domain is src/teams/.
import { manageDoc, manageRoute } from './manage-route.ts';
import { requires } from './requires.ts';
import { requireFeature } from '../accounts/entitlements.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { clock } from '../env.ts';
import { accountAuth } from '../http/account-auth.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import { mailInvitation, mailOff, operatorLinkCommand } from '../teams/invitation-mail.ts';
import type { AppEnv } from '../http/context.ts';
import { ApiError } from '../errors.ts';
import { parseJsonBody } from '../http/json-body.ts';
import {
  changeRole,
  invite,
  listMembers,
  pendingInvitations,
  removeMember,
  renewInvitation,
  type ChangeOutcome,
} from '../teams/members.ts';
import { INVITATION_TTL_MS, MAX_MEMBERS_PER_ACCOUNT } from '../teams/limits.ts';
import { MANAGE_NOTE } from './manage-schema.ts';
import {
  CreatedInvitation,
  InvitationIdParam,
  InviteBody,
  MemberIdParam,
  MemberList,
  MemberOne,
  PatchMemberBody,
  SentInvitation,
} from './members-schema.ts';
import { jsonOk } from './schemas.ts';
import { requestMeta } from './manage-read.ts';

export const MEMBERS_PATH = '/api/v1/members';
const NOTE = ` Tools tier enterprise (403 plan_upgrade_required otherwise). Roles: owner, admin (members, keys, webhooks, SSO, audit log), developer (keys, usage), viewer (read only); a manage key acts as an admin.${MANAGE_NOTE}`;

const enterprise = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  requireFeature({ tools: c.var.principal.toolsTier }, 'members');
  await next();
};
const guards = [accountAuth, enterprise] as const;

/** "Send again" where mail is off: the refusal, naming what an operator can do instead. */
export const mailOffMessage = (problem: string, invitationId: string): string =>
  `mail is not configured on this service (${problem}), so invitation links cannot be mailed; an operator who vouches for the address can print a link: ${operatorLinkCommand(invitationId)}`;

export function changeRefusal(outcome: Exclude<ChangeOutcome, { ok: true }>): ApiError {
  switch (outcome.reason) {
    case 'not_found':
      return new ApiError('not_found', 'no member with this id in your account', { param: 'id' });
    case 'owner_only':
      return new ApiError('forbidden', 'only an owner may make owners or change or remove an owner');
    case 'last_owner':
      return new ApiError(
        'bad_request',
        'the last owner can neither leave nor be demoted: make another member owner first',
      );
  }
}

const listRoute = manageRoute(requires('read'), [...guards], {
  method: 'get',
  path: MEMBERS_PATH,
  summary: "The account's members and pending invitations",
  description: `Oldest first.${NOTE}`,
  responses: {
    200: jsonOk('The members', MemberList),
  },
  errors: ['plan_upgrade_required'],
});

const inviteDoc = manageDoc({
  method: 'post',
  path: `${MEMBERS_PATH}/invitations`,
  summary: 'Invite a person: a single-use link, valid 7 days, mailed to them only',
  description: `The link is mailed to the email invited, and to nobody else: not in this answer, since accepting it is what proves the address (data.mail says what became of the mail: \`not_sent\`, send it again; \`not_configured\`, this service has no mail, and an operator who vouches for the address prints a link with \`npm run admin -- members invitation-link <id>\`). Only owners invite owners. At most ${MAX_MEMBERS_PER_ACCOUNT} members and pending invitations per account. Writes member.invited.${NOTE}`,
  request: { body: { required: true, content: { 'application/json': { schema: InviteBody } } } },
  responses: {
    201: jsonOk('The invitation, and what became of its mail', CreatedInvitation),
  },
  errors: ['bad_request', 'plan_upgrade_required', 'payload_too_large'],
});

const sendDoc = manageDoc({
  method: 'post',
  path: `${MEMBERS_PATH}/invitations/{id}/send`,
  summary: 'Send an invitation again: a new link, mailed to the person invited',
  description: `For a pending invitation: a new single-use link replaces the one before (which stops working) and is mailed to the email invited, never returned. 400 where mail is not configured (the message names the operator's command that prints a link). Writes member.invitation_renewed.${NOTE}`,
  request: { params: InvitationIdParam },
  responses: {
    200: jsonOk('The invitation, and what became of its mail', SentInvitation),
  },
  errors: ['bad_request', 'plan_upgrade_required', 'not_found'],
});

const patchDoc = manageDoc({
  method: 'patch',
  path: `${MEMBERS_PATH}/{id}`,
  summary: "Change a member's role",
  description: `Only owners make owners or change an owner's role; the last owner cannot be demoted (400). A demotion below admin revokes the manage keys the member made, in the same change (listed in the record's details.revoked_keys). Writes member.role_changed.${NOTE}`,
  request: {
    params: MemberIdParam,
    body: { required: true, content: { 'application/json': { schema: PatchMemberBody } } },
  },
  responses: {
    200: jsonOk('The member as it is now', MemberOne),
  },
  errors: ['bad_request', 'plan_upgrade_required', 'not_found', 'payload_too_large'],
});

const deleteRoute = manageRoute(requires('members:write', { self: true }), [...guards], {
  method: 'delete',
  path: `${MEMBERS_PATH}/{id}`,
  summary: 'Remove a member (or leave, with your own id); their sessions end at once',
  description: `Any member may remove themself; the last owner cannot (400). Only owners remove owners. Revokes the manage keys the member made, in the same change (listed in the record's details.revoked_keys). Writes member.removed.${NOTE}`,
  request: { params: MemberIdParam },
  responses: {
    200: jsonOk('The member as it was', MemberOne),
  },
  errors: ['bad_request', 'plan_upgrade_required', 'not_found'],
});

export function registerMembers(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listRoute, async (c) => {
    const { accountId } = c.var.principal;
    const members = await listMembers(c.env.DB, accountId);
    return c.json(
      {
        data: members,
        invitations: await pendingInvitations(c.env.DB, accountId, clock(c.env)),
        meta: { ...requestMeta(c), total: members.length },
      },
      200,
    );
  });

  app.openAPIRegistry.registerPath(inviteDoc);
  app.post(`${MEMBERS_PATH}/invitations`, requires('members:write'), ...guards, async (c) => {
    const example = '{"email":"grace@example.com","role":"developer"}';
    const body = await parseJsonBody(c.req.raw, InviteBody, FORM_BODY_MAX_BYTES, example);
    const { accountId, role } = c.var.principal;
    const made = await invite(c.env.DB, accountId, body, role, clock(c.env), auditOrigin(c));
    if (!made.ok && made.reason === 'owner_only') throw new ApiError('forbidden', 'only an owner may invite an owner');
    if (!made.ok && made.reason === 'email_taken')
      throw new ApiError(
        'bad_request',
        'this email already belongs to a member (of this or another account) or has a pending invitation',
        { param: 'email' },
      );
    if (!made.ok)
      throw new ApiError('bad_request', `an account may have at most ${made.max} members and pending invitations`, {
        details: { max: made.max },
      });
    const mail = await mailInvitation(c.env, accountId, made.invitation, made.token, clock(c.env));
    return c.json({ data: { ...made.invitation, mailed: mail === 'sent', mail }, meta: requestMeta(c) }, 201);
  });

  app.openAPIRegistry.registerPath(sendDoc);
  app.post(`${MEMBERS_PATH}/invitations/:id/send`, requires('members:write'), ...guards, async (c) => {
    const id = InvitationIdParam.safeParse({ id: c.req.param('id') });
    if (!id.success)
      throw new ApiError('bad_request', `id ${id.error.issues[0]?.message ?? 'is not valid'}`, { param: 'id' });
    const { accountId } = c.var.principal;
    // Checked before the link is renewed: a renewal that could not be mailed would kill an operator's link.
    const off = mailOff(c.env);
    if (off !== null) throw new ApiError('bad_request', mailOffMessage(off, id.data.id));
    const renewed = await renewInvitation(c.env.DB, accountId, id.data.id, clock(c.env), auditOrigin(c));
    if (!renewed.ok)
      throw new ApiError('not_found', 'no pending invitation with this id in your account', { param: 'id' });
    const mail = await mailInvitation(c.env, accountId, renewed.invitation, renewed.token, clock(c.env));
    return c.json({ data: { ...renewed.invitation, mailed: mail === 'sent', mail }, meta: requestMeta(c) }, 200);
  });

  app.openAPIRegistry.registerPath(patchDoc);
  app.patch(`${MEMBERS_PATH}/:id`, requires('members:write'), ...guards, async (c) => {
    const body = await parseJsonBody(c.req.raw, PatchMemberBody, FORM_BODY_MAX_BYTES, '{"role":"admin"}');
    const { accountId, role } = c.var.principal;
    const by = { accountId, role, now: clock(c.env), origin: auditOrigin(c) };
    const outcome = await changeRole(c.env, c.req.param('id'), body.role, by);
    if (!outcome.ok) throw changeRefusal(outcome);
    return c.json({ data: outcome.member, meta: requestMeta(c) }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { accountId, role } = c.var.principal;
    const id = c.req.valid('param').id;
    const self = c.var.session?.member.id === id;
    const by = { accountId, role, now: clock(c.env), origin: auditOrigin(c) };
    const outcome = await removeMember(c.env, id, self, by);
    if (!outcome.ok) throw changeRefusal(outcome);
    return c.json({ data: outcome.member, meta: requestMeta(c) }, 200);
  });
}

export const INVITATION_DAYS = INVITATION_TTL_MS / 86_400_000;
