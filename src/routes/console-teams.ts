// The console's team pages: members (invite, send again, change roles, remove, leave), the invitation link's page
// (join with a password), and the audit log (filters, pages, exports). Roles are checked by `requires`
// (src/routes/requires.ts) where each route is registered; the domain is src/teams/ and src/audit/.
import { requires } from './requires.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { can } from '../accounts/entitlements.ts';
import { AUDIT_PAGE_DEFAULT } from '../audit/limits.ts';
import { listAudit } from '../audit/query.ts';
import { FORM_BODY_MAX_BYTES, NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/limits.ts';
import { isEmailAddress } from '../auth/credentials.ts';
import { passwordIterations } from '../auth/password.ts';
import { clock } from '../env.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import { mailOff } from '../mail/config.ts';
import { mailInvitation } from '../teams/invitation-mail.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { clearCookie, loadSession, requireSessionPage, sessionToken } from '../http/session.ts';
import { deleteSession } from '../auth/sessions.ts';
import { ssoCoversEmail } from '../sso/domains.ts';
import {
  changeRole,
  invite,
  join,
  listMembers,
  openInvitation,
  pendingInvitations,
  removeMember,
  renewInvitation,
  type ChangeOutcome,
} from '../teams/members.ts';
import { roleMay, isRole } from '../teams/roles.ts';
import { auditPage } from '../web/views/audit.ts';
import { acceptPage, membersPage, type MembersState } from '../web/views/members.ts';
import { messagePage } from '../web/views/message.ts';
import { AuditExportQuery, AuditListQuery } from './audit-schema.ts';
import { exportResponse, filtersOf } from './audit-export.ts';
import { signInOrigin, startSession } from './auth-forms.ts';

const EXPIRED_FORM = 'This form had expired or came from another site. Nothing was changed; please try again.';
const signedIn = [loadSession, requireSessionPage] as const;
const sessionOf = (c: Context<AppEnv>) => c.var.session!;

async function members(c: Context<AppEnv>, extra: Partial<MembersState> = {}, status: 200 | 400 | 403 = 200) {
  const s = sessionOf(c);
  const enterprise = can({ tools: s.account.tools_tier }, 'members');
  const state: MembersState = {
    csrf: csrfTokenFor(c),
    account: s.account,
    me: { id: s.member.id, role: s.member.role },
    enterprise,
    manage: roleMay(s.member.role, 'members:write'),
    members: enterprise ? await listMembers(c.env.DB, s.account.id) : [],
    invitations: enterprise ? await pendingInvitations(c.env.DB, s.account.id, clock(c.env)) : [],
    ...extra,
  };
  return sendPage(c, membersPage(state), status);
}

function changeMessage(outcome: Exclude<ChangeOutcome, { ok: true }>): string {
  switch (outcome.reason) {
    case 'not_found':
      return 'There is no such member in your account.';
    case 'owner_only':
      return 'Only an owner may make owners, or change or remove an owner.';
    case 'last_owner':
      return 'The last owner can neither leave nor be demoted: make another member owner first.';
  }
}

/** Form fields without the empty ones, so an unused filter is not a filter. */
const present = (q: Record<string, string>) => Object.fromEntries(Object.entries(q).filter(([, v]) => v !== ''));

export function registerConsoleTeams(app: OpenAPIHono<AppEnv>): void {
  app.get('/members', requires('read'), ...signedIn, (c) => members(c));

  app.post('/members/invitations', requires('members:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return members(c, { error: EXPIRED_FORM }, 403);
    const s = sessionOf(c);
    if (!can({ tools: s.account.tools_tier }, 'members')) return members(c, {}, 403);
    const email = field(form, 'email').trim();
    const role = field(form, 'role');
    if (!isEmailAddress(email)) return members(c, { error: 'Enter an email address like name@example.com.' }, 400);
    if (!isRole(role)) return members(c, { error: 'Choose a role.' }, 400);
    const made = await invite(c.env.DB, s.account.id, { email, role }, s.member.role, clock(c.env), auditOrigin(c));
    if (!made.ok) {
      if (made.reason === 'owner_only') return members(c, { error: 'Only an owner may invite an owner.' }, 403);
      return members(
        c,
        {
          error:
            made.reason === 'email_taken'
              ? 'This email already belongs to a member, or has a pending invitation.'
              : `Your account has ${made.max} members and invitations, the most it may.`,
        },
        400,
      );
    }
    // The link goes to the invited mailbox only; the page says what became of the mail.
    const mail = await mailInvitation(c.env, s.account.id, made.invitation, made.token, clock(c.env));
    return members(c, { sent: { invitation: made.invitation, mail, again: false } });
  });

  app.post('/members/invitations/:id/send', requires('members:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return members(c, { error: EXPIRED_FORM }, 403);
    const s = sessionOf(c);
    if (!can({ tools: s.account.tools_tier }, 'members')) return members(c, {}, 403);
    // Mail off: the invitation keeps its link (an operator may have printed it), and the page says why.
    if (mailOff(c.env) !== null) {
      const pending = await pendingInvitations(c.env.DB, s.account.id, clock(c.env));
      const invitation = pending.find((i) => i.id === c.req.param('id'));
      if (!invitation) return members(c, { error: 'There is no such pending invitation.' }, 400);
      return members(c, { sent: { invitation, mail: 'not_configured', again: true } }, 400);
    }
    const renewed = await renewInvitation(c.env.DB, s.account.id, c.req.param('id'), clock(c.env), auditOrigin(c));
    if (!renewed.ok) return members(c, { error: 'There is no such pending invitation.' }, 400);
    const mail = await mailInvitation(c.env, s.account.id, renewed.invitation, renewed.token, clock(c.env));
    return members(c, { sent: { invitation: renewed.invitation, mail, again: true } });
  });

  app.post('/members/:id/role', requires('members:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return members(c, { error: EXPIRED_FORM }, 403);
    const s = sessionOf(c);
    const role = field(form, 'role');
    if (!isRole(role)) return members(c, { error: 'Choose a role.' }, 400);
    const by = { accountId: s.account.id, role: s.member.role, now: clock(c.env), origin: auditOrigin(c) };
    const outcome = await changeRole(c.env, c.req.param('id'), role, by);
    if (!outcome.ok) return members(c, { error: changeMessage(outcome) }, outcome.reason === 'owner_only' ? 403 : 400);
    return redirectPage(c, '/members');
  });

  app.post('/members/:id/remove', requires('members:write', { self: true }), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return members(c, { error: EXPIRED_FORM }, 403);
    const s = sessionOf(c);
    const self = c.req.param('id') === s.member.id;
    const by = { accountId: s.account.id, role: s.member.role, now: clock(c.env), origin: auditOrigin(c) };
    const outcome = await removeMember(c.env, c.req.param('id'), self, by);
    if (!outcome.ok) return members(c, { error: changeMessage(outcome) }, outcome.reason === 'owner_only' ? 403 : 400);
    if (!self) return redirectPage(c, '/members');
    await deleteSession(c.env.DB, sessionToken(c));
    clearCookie(c, 'session');
    return redirectPage(c, '/');
  });

  // The invitation link: open to anyone holding it (it is the credential), signed in or not.
  app.get('/invitations/:token', loadSession, async (c) => {
    const open = await openInvitation(c.env.DB, c.req.param('token'), clock(c.env));
    if (!open) return gone(c);
    const sso = await ssoCoversEmail(c.env.DB, open.accountId, open.email);
    return sendPage(
      c,
      acceptPage({
        csrf: csrfTokenFor(c),
        token: c.req.param('token'),
        email: open.email,
        accountName: open.accountName,
        role: open.role,
        sso,
      }),
    );
  });

  app.post('/invitations/:token', loadSession, async (c) => {
    const token = c.req.param('token');
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const open = await openInvitation(c.env.DB, token, clock(c.env));
    if (!open) return gone(c);
    const again = (status: 400 | 403, error: string) =>
      sendPage(
        c,
        acceptPage({
          csrf: csrfTokenFor(c),
          token,
          email: open.email,
          accountName: open.accountName,
          role: open.role,
          sso: false,
          error,
        }),
        status,
      );
    if (!(await csrfValid(c, field(form, '_csrf')))) return again(403, EXPIRED_FORM);
    const joined = await join(
      c.env.DB,
      token,
      { name: field(form, 'name'), password: field(form, 'password') },
      clock(c.env),
      (id) => signInOrigin(c, id),
      passwordIterations(c.env),
    );
    if (joined.ok) return startSession(c, joined, undefined);
    switch (joined.reason) {
      case 'gone':
        return gone(c);
      case 'name':
        return again(400, `Enter your name (at most ${NAME_MAX_LENGTH} characters).`);
      case 'password':
        return again(400, `Choose a password of ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`);
      case 'email_taken':
        return again(400, 'This email already belongs to a member of an account.');
    }
  });

  app.get('/audit', requires('audit:read'), ...signedIn, async (c) => {
    const s = sessionOf(c);
    const raw = present(c.req.query());
    const parsed = AuditListQuery.safeParse(raw);
    const filters = { since: raw.since, until: raw.until, action: raw.action, actor: raw.actor };
    const enterprise = can({ tools: s.account.tools_tier }, 'audit_log');
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendPage(
        c,
        auditPage({
          csrf: csrfTokenFor(c),
          account: s.account,
          enterprise,
          records: [],
          filters,
          next: null,
          error: `The ${String(issue?.path[0] ?? 'filter')} ${issue?.message ?? 'is not valid'}.`,
        }),
        400,
      );
    }
    if (!enterprise)
      return sendPage(
        c,
        auditPage({ csrf: csrfTokenFor(c), account: s.account, enterprise, records: [], filters, next: null }),
      );
    const q = parsed.data;
    const page = await listAudit(c.env.DB, s.account.id, filtersOf(q), {
      limit: q.limit ?? AUDIT_PAGE_DEFAULT,
      cursor: q.cursor === undefined ? undefined : Number(q.cursor),
    });
    const next =
      page.nextCursor === null
        ? null
        : new URLSearchParams({
            ...present({ since: q.since ?? '', until: q.until ?? '', action: q.action ?? '', actor: q.actor ?? '' }),
            cursor: page.nextCursor,
          }).toString();
    return sendPage(
      c,
      auditPage({ csrf: csrfTokenFor(c), account: s.account, enterprise, records: page.records, filters, next }),
    );
  });

  app.get('/audit/export', requires('audit:read'), ...signedIn, async (c) => {
    const s = sessionOf(c);
    const parsed = AuditExportQuery.safeParse(present(c.req.query()));
    if (!parsed.success || !can({ tools: s.account.tools_tier }, 'audit_log')) {
      const message = parsed.success
        ? 'The audit log comes with the enterprise tools tier.'
        : 'These filters are not valid: go back and correct them.';
      return sendPage(
        c,
        messagePage({ title: 'No export', message, csrf: csrfTokenFor(c), account: s.account }),
        parsed.success ? 403 : 400,
      );
    }
    return exportResponse(c.env.DB, s.account.id, filtersOf(parsed.data), parsed.data.format);
  });
}

function gone(c: Context<AppEnv>): Response {
  const message =
    'This invitation link has been used, has expired, or never existed. Ask the person who invited you for a new one.';
  return sendPage(
    c,
    messagePage({
      title: 'Invitation not valid',
      message,
      csrf: csrfTokenFor(c),
      account: c.var.session?.account ?? null,
    }),
    404,
  );
}
